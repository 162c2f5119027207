import { describe, expect, it } from 'vitest';
import { MemoryWindows } from './memory-windows.js';

describe('MemoryWindows', () => {
  it("counts a key's requests in a fixed window from its first, over-limit ones too, and starts afresh after it", () => {
    let now = 1_000_000;
    const windows = new MemoryWindows({ requests: 2, perSeconds: 60 }, () => now);
    expect(windows.consume('a')).toEqual({
      allowed: true,
      policy: { requests: 2, perSeconds: 60 },
      remaining: 1,
      resetSeconds: 60,
    });
    now += 30_500;
    expect(windows.consume('a')).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 30 });
    expect(windows.consume('a')).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 30 });
    // Another key has a window of its own.
    expect(windows.consume('b')).toMatchObject({ allowed: true, remaining: 1, resetSeconds: 60 });
    now += 29_499;
    // The last millisecond of the window: refused, with a reset of at least a second.
    expect(windows.consume('a')).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 1 });
    now += 1;
    expect(windows.consume('a')).toMatchObject({ allowed: true, remaining: 1, resetSeconds: 60 });
  });

  it('forgets ended windows once many are remembered', () => {
    let now = 0;
    const windows = new MemoryWindows({ requests: 1, perSeconds: 1 }, () => now);
    for (let index = 0; index < 2000; index++) windows.consume(`key-${index}`);
    expect(windows.size()).toBe(2000);
    now += 1000;
    windows.consume('late');
    expect(windows.size()).toBe(1);
  });
});
