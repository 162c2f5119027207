import { describe, expect, it } from 'vitest';
import { createAuthFailureLimiter } from './auth-failure-limiter.js';

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('createAuthFailureLimiter', () => {
  it('lets an address fail maxFailures times in a window, then refuses it until the window ends', () => {
    const time = clock();
    const limiter = createAuthFailureLimiter({ maxFailures: 3, windowMs: 60_000, maxAddresses: 10, now: time.now });
    expect(limiter.blockedForMs('10.0.0.1')).toBe(0);
    expect([1, 2, 3].map(() => limiter.recordFailure('10.0.0.1'))).toEqual([false, false, true]);
    time.advance(20_000);
    expect(limiter.blockedForMs('10.0.0.1')).toBe(40_000);
    expect(limiter.blockedForMs('10.0.0.2')).toBe(0);
    // Counted past the budget, but the address only crossed it once.
    expect(limiter.recordFailure('10.0.0.1')).toBe(false);
    time.advance(40_000);
    expect(limiter.blockedForMs('10.0.0.1')).toBe(0);
    expect(limiter.size()).toBe(0);
    expect(limiter.recordFailure('10.0.0.1')).toBe(false);
  });

  it('never remembers more than maxAddresses, whatever the flood of addresses', () => {
    const time = clock();
    const limiter = createAuthFailureLimiter({ maxFailures: 2, windowMs: 60_000, maxAddresses: 100, now: time.now });
    limiter.recordFailure('victim');
    limiter.recordFailure('victim');
    expect(limiter.blockedForMs('victim')).toBeGreaterThan(0);
    for (let index = 0; index < 100_000; index++) {
      limiter.recordFailure(`198.51.${index >> 8}.${index & 255}`);
      expect(limiter.size()).toBeLessThanOrEqual(100);
    }
    // The longest-remembered address went first: it gets a fresh budget, the limiter stays bounded.
    expect(limiter.blockedForMs('victim')).toBe(0);
    expect(limiter.size()).toBe(100);
  });
});
