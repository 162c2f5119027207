import { describe, expect, it } from 'vitest';
import { createTrackedWork, settledWithin } from './tracked-work.js';

describe('createTrackedWork', () => {
  it('counts a task until it settles, and tells of it once it is gone', async () => {
    const sizesWhenSettled: number[] = [];
    const work = createTrackedWork(() => sizesWhenSettled.push(work.size));
    let finish: () => void = () => {};
    work.track(new Promise<void>((resolve) => (finish = resolve)));
    work.track(Promise.resolve());
    expect(work.size).toBe(2);
    await Promise.resolve();
    await Promise.resolve();
    expect(sizesWhenSettled).toEqual([1]);
    finish();
    await Promise.all(work.pending());
    expect(sizesWhenSettled).toEqual([1, 0]);
    expect(work.pending()).toEqual([]);
  });
});

describe('settledWithin', () => {
  it('waits for the promises to settle, or for its time, whichever comes first', async () => {
    let settled = false;
    await settledWithin([new Promise<void>((resolve) => setTimeout(resolve, 10)).then(() => (settled = true))], 60_000);
    expect(settled).toBe(true);

    const started = performance.now();
    await settledWithin([new Promise<void>(() => {})], 30);
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
  });
});
