import { DatabaseUnavailableError, type FanOutResult } from '@plant-store/db';
import { describe, expect, it } from 'vitest';
import { logSink } from '../../test-support/log-sink.js';
import { createCaps } from './caps.js';
import { createFanOutPacer, type FanOutStore, RECEIVERS_RECHECK_MS } from './fan-out-pacer.js';

const A = 'http://a.example';
const B = 'http://b.example';

/** The store's fan-out in memory: each statement writes what `written` says next, per receiver. */
class FakeFanOutStore implements FanOutStore {
  receivers: string[] = [];
  /** What the next statements write, one entry each; none left: no event waiting. */
  readonly written: Array<Record<string, number>> = [];
  readonly batches: number[] = [];
  receiverCalls = 0;
  failing = false;

  async fanOutEvents({ maxDeliveries }: { readonly maxDeliveries: number }): Promise<FanOutResult> {
    this.batches.push(maxDeliveries);
    if (this.failing) throw new DatabaseUnavailableError();
    const next = this.written.shift();
    if (next === undefined) return { events: 0, deliveries: 0, deliveriesByReceiver: new Map() };
    const deliveriesByReceiver = new Map(Object.entries(next));
    const deliveries = [...deliveriesByReceiver.values()].reduce((sum, count) => sum + count, 0);
    return { events: 1, deliveries, deliveriesByReceiver };
  }

  async webhookReceivers(): Promise<string[]> {
    this.receiverCalls += 1;
    if (this.failing) throw new DatabaseUnavailableError();
    return this.receivers;
  }
}

/** Paced at 3 waiting per receiver, polled every second, on a clock the test moves. */
function pacer(store: FakeFanOutStore) {
  const clock = { at: 10_000 };
  const { log, lines } = logSink();
  const caps = createCaps({ concurrency: 4, perWebhookConcurrency: 1, fanOutAhead: 3, fanOutBatch: 50 }).configured;
  const paced = createFanOutPacer({ store, pollMs: 1_000, log, clock: () => clock.at });
  return { paced, caps, clock, lines };
}

describe('createFanOutPacer', () => {
  it('counts what each statement writes per receiver, and stops once every receiver has fanOutAhead waiting', async () => {
    const store = new FakeFanOutStore();
    store.receivers = [A, B];
    store.written.push({ [A]: 3 }, { [B]: 2 }, { [B]: 1 }, { [A]: 1 });
    const { paced, caps } = pacer(store);
    await paced.prepare();
    expect([paced.waiting(A), paced.waiting(B)]).toEqual([0, 0]);

    await paced.fanOut(caps);
    // A has its 3; B none: the fan-out goes on for B, writing A's rows ahead.
    expect(paced.mayFanOut(caps)).toBe(true);
    await paced.fanOut(caps);
    await paced.fanOut(caps);
    expect([paced.waiting(A), paced.waiting(B)]).toEqual([3, 3]);
    expect(paced.mayFanOut(caps)).toBe(false);
    expect(store.batches).toEqual([50, 50, 50]);

    // A claim takes one of A's first attempts: room for more again.
    paced.firstAttemptClaimed(A);
    expect(paced.waiting(A)).toBe(2);
    expect(paced.mayFanOut(caps)).toBe(true);
  });

  it('stays due while statements find events, and not after one that found none until marked', async () => {
    const store = new FakeFanOutStore();
    store.written.push({ [A]: 1 });
    const { paced, caps } = pacer(store);
    // Due from the start: events may be waiting from before the process started.
    expect(paced.mayFanOut(caps)).toBe(true);
    await paced.fanOut(caps);
    expect(paced.mayFanOut(caps)).toBe(true);
    await paced.fanOut(caps);
    expect(paced.mayFanOut(caps)).toBe(false);
    paced.markDue();
    expect(paced.mayFanOut(caps)).toBe(true);
  });

  it('is due again a poll interval after its last statement, whatever else happens', async () => {
    const store = new FakeFanOutStore();
    const { paced, caps, clock } = pacer(store);
    await paced.fanOut(caps);
    clock.at += 999;
    await paced.prepare();
    expect(paced.mayFanOut(caps)).toBe(false);
    clock.at += 1;
    await paced.prepare();
    expect(paced.mayFanOut(caps)).toBe(true);
  });

  it('on an empty claim, zeroes the receivers that were not full as it was made and keeps the others', async () => {
    const store = new FakeFanOutStore();
    store.receivers = [A, B];
    store.written.push({ [A]: 3, [B]: 3 });
    const { paced, caps } = pacer(store);
    await paced.prepare();
    await paced.fanOut(caps);
    paced.nothingClaimed(new Set([A]));
    expect([paced.waiting(A), paced.waiting(B)]).toEqual([3, 0]);
  });

  it('never counts below zero, nor a receiver it does not fan out for', async () => {
    const store = new FakeFanOutStore();
    store.receivers = [A];
    const { paced } = pacer(store);
    await paced.prepare();
    paced.firstAttemptClaimed(A);
    paced.firstAttemptClaimed(B);
    expect([paced.waiting(A), paced.waiting(B)]).toEqual([0, undefined]);
  });

  it('checks the receivers each poll interval, or sooner when events come after a statement that found none', async () => {
    const store = new FakeFanOutStore();
    const { paced, caps, clock } = pacer(store);
    await paced.prepare();
    expect(store.receiverCalls).toBe(1);
    // Found none: events coming back check again, but not more often than RECEIVERS_RECHECK_MS.
    await paced.fanOut(caps);
    paced.markDue();
    clock.at += RECEIVERS_RECHECK_MS - 1;
    await paced.prepare();
    expect(store.receiverCalls).toBe(1);
    clock.at += 1;
    await paced.prepare();
    expect(store.receiverCalls).toBe(2);

    // Events found: the next check waits for the poll interval.
    store.written.push({ [A]: 1 }, { [A]: 1 });
    await paced.fanOut(caps);
    clock.at += RECEIVERS_RECHECK_MS;
    await paced.prepare();
    expect(store.receiverCalls).toBe(2);
    clock.at += 1_000;
    await paced.prepare();
    expect(store.receiverCalls).toBe(3);
  });

  it('counts a receiver with a new subscription with none waiting, and forgets one with none left', async () => {
    const store = new FakeFanOutStore();
    store.receivers = [A];
    store.written.push({ [A]: 3 });
    const { paced, caps, clock } = pacer(store);
    await paced.prepare();
    await paced.fanOut(caps);
    await paced.fanOut(caps);
    paced.markDue();
    expect(paced.mayFanOut(caps)).toBe(false);

    store.receivers = [B];
    clock.at += 1_000;
    await paced.prepare();
    expect([paced.waiting(A), paced.waiting(B)]).toEqual([undefined, 0]);
    expect(paced.mayFanOut(caps)).toBe(true);
  });

  it('rides out a failing store: one warning, the counts kept, and says when it fans out again', async () => {
    const store = new FakeFanOutStore();
    store.receivers = [A];
    store.written.push({ [A]: 3 }, { [A]: 1 });
    const { paced, caps, clock, lines } = pacer(store);
    await paced.prepare();
    await paced.fanOut(caps);

    store.failing = true;
    clock.at += 1_000;
    await paced.prepare();
    await paced.fanOut(caps);
    await paced.fanOut(caps);
    expect(paced.waiting(A)).toBe(3);
    expect(lines.filter((line) => line.level === 'warn')).toEqual([
      expect.objectContaining({
        message: 'webhook dispatch cannot fan out events; retrying',
        err: expect.objectContaining({ type: 'DatabaseUnavailableError' }),
      }),
    ]);

    store.failing = false;
    await paced.fanOut(caps);
    expect(paced.waiting(A)).toBe(4);
    expect(lines.at(-1)).toMatchObject({ level: 'info', message: 'webhook dispatch fans out events again' });
  });
});
