import { describe, expect, it } from 'vitest';
import { createWakeup } from './wakeup.js';

describe('createWakeup', () => {
  it('sleeps until its time runs out when nothing wakes it', async () => {
    const wakeup = createWakeup();
    const started = performance.now();
    expect(await wakeup.sleep(30)).toBe('timeout');
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
  });

  it('ends a sleep under way at the first wake, with its reason', async () => {
    const wakeup = createWakeup();
    const nudged = wakeup.sleep(60_000);
    wakeup.wake('nudged');
    expect(await nudged).toBe('nudged');
    const woken = wakeup.sleep(60_000);
    wakeup.wake();
    expect(await woken).toBe('woken');
  });

  it('keeps a wake that came while awake for the next sleep only, which returns at once', async () => {
    const wakeup = createWakeup();
    wakeup.wake();
    expect(await wakeup.sleep(60_000)).toBe('woken');
    expect(await wakeup.sleep(20)).toBe('timeout');
  });

  it('lets a nudge outrank a finished delivery among wakes piled up while awake', async () => {
    const wakeup = createWakeup();
    wakeup.wake('nudged');
    wakeup.wake();
    expect(await wakeup.sleep(60_000)).toBe('nudged');
    wakeup.wake();
    wakeup.wake('nudged');
    expect(await wakeup.sleep(60_000)).toBe('nudged');
  });

  it('keeps a wake that came after the one that ended a sleep for the next sleep', async () => {
    const wakeup = createWakeup();
    const sleeping = wakeup.sleep(60_000);
    wakeup.wake();
    wakeup.wake('nudged');
    expect(await sleeping).toBe('woken');
    expect(await wakeup.sleep(60_000)).toBe('nudged');
  });
});
