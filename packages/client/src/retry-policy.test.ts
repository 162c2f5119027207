import { describe, expect, it } from 'vitest';
import { parseRetryAfter, resolveRetryPolicy, retryDelayMs, sleep } from './retry-policy.js';

const policy = { attempts: 5, baseDelayMs: 100, maxDelayMs: 1000 };

describe('resolveRetryPolicy', () => {
  it('defaults to 3 attempts, 200 ms base and 5 s cap', () => {
    expect(resolveRetryPolicy()).toEqual({ attempts: 3, baseDelayMs: 200, maxDelayMs: 5000 });
    expect(resolveRetryPolicy({ attempts: 1 })).toEqual({ attempts: 1, baseDelayMs: 200, maxDelayMs: 5000 });
  });

  it.each([
    [{ attempts: 0 }, /retry.attempts/],
    [{ attempts: 1.5 }, /retry.attempts/],
    [{ baseDelayMs: -1 }, /retry.baseDelayMs/],
    [{ maxDelayMs: Number.POSITIVE_INFINITY }, /retry.maxDelayMs/],
  ])('refuses %o', (options, message) => {
    expect(() => resolveRetryPolicy(options)).toThrow(message);
  });
});

describe('retryDelayMs', () => {
  it('draws from [0, base * 2^(attempt-1)] (full jitter)', () => {
    expect(retryDelayMs(policy, 1, undefined, () => 0)).toBe(0);
    expect(retryDelayMs(policy, 1, undefined, () => 0.5)).toBe(50);
    expect(retryDelayMs(policy, 2, undefined, () => 0.5)).toBe(100);
    expect(retryDelayMs(policy, 3, undefined, () => 0.5)).toBe(200);
    expect(retryDelayMs(policy, 3, undefined, () => 0.999)).toBeCloseTo(399.6);
  });

  it('never draws beyond maxDelayMs', () => {
    expect(retryDelayMs(policy, 10, undefined, () => 0.999)).toBeCloseTo(999);
    expect(retryDelayMs(policy, 60, undefined, () => 0.5)).toBe(500);
  });

  it('waits exactly Retry-After when given, capped by maxDelayMs, without jitter', () => {
    expect(retryDelayMs(policy, 1, 0, () => 0.5)).toBe(0);
    expect(retryDelayMs(policy, 1, 0.5, () => 0)).toBe(500);
    expect(retryDelayMs(policy, 1, 1, () => 0)).toBe(1000);
    expect(retryDelayMs(policy, 1, 120, () => 0)).toBe(1000);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('reads delay-seconds', () => {
    expect(parseRetryAfter('1', now)).toBe(1);
    expect(parseRetryAfter(' 120 ', now)).toBe(120);
    expect(parseRetryAfter('0', now)).toBe(0);
  });

  it('reads an HTTP-date as the seconds until then, 0 when past', () => {
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
  });

  it.each([null, '', 'soon', '-1', '1.5'])('gives undefined for %o', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});

describe('sleep', () => {
  it('rejects with the reason as soon as the signal aborts', async () => {
    const controller = new AbortController();
    const started = performance.now();
    const sleeping = sleep(10_000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(sleeping).rejects.toThrow('stop');
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('rejects at once when the signal has already aborted', async () => {
    await expect(sleep(10_000, AbortSignal.abort(new Error('already')))).rejects.toThrow('already');
  });
});
