import { describe, expect, it } from 'vitest';
import { BUSY_FAN_OUT_BATCH, BUSY_LOOK_AHEAD, createCaps, DEFAULT_FAN_OUT_BATCH, LOOK_AHEAD } from './caps.js';

describe('createCaps', () => {
  it('configures the caps from the options, with the defaults for those left out', () => {
    expect(createCaps({ concurrency: 16, perWebhookConcurrency: 4 }).configured).toEqual({
      busy: false,
      slots: 16,
      perWebhook: 4,
      perReceiver: 4,
      // Half the slots for one team's deliveries.
      perTeam: 8,
      lookAhead: LOOK_AHEAD,
      claimAfter: 4,
      maxUnrecorded: 128,
      fanOutBatch: DEFAULT_FAN_OUT_BATCH,
      fanOutAhead: 2 * DEFAULT_FAN_OUT_BATCH,
    });
    const set = createCaps({
      concurrency: 2,
      perWebhookConcurrency: 1,
      perReceiverConcurrency: 2,
      fanOutBatch: 10,
      fanOutAhead: 3,
    }).configured;
    expect(set).toMatchObject({
      slots: 2,
      perWebhook: 1,
      perReceiver: 2,
      claimAfter: 1,
      fanOutBatch: 10,
      fanOutAhead: 3,
    });
  });

  it('gives way while busy: a quarter of the slots, one per receiver and webhook, smaller fan-outs', () => {
    expect(createCaps({ concurrency: 16, perWebhookConcurrency: 4 }).whileBusy).toEqual({
      busy: true,
      slots: 4,
      perWebhook: 1,
      perReceiver: 1,
      // The same share of the busy slots: 2 of 4 receivers.
      perTeam: 2,
      lookAhead: BUSY_LOOK_AHEAD,
      claimAfter: BUSY_LOOK_AHEAD / 2,
      // The bound on attempts not yet recorded stays the configured one.
      maxUnrecorded: 128,
      fanOutBatch: BUSY_FAN_OUT_BATCH,
      fanOutAhead: BUSY_FAN_OUT_BATCH,
    });
  });

  it('never holds more claims per receiver, nor fans out more, while busy than otherwise', () => {
    const busy = createCaps({
      concurrency: 3,
      perWebhookConcurrency: 1,
      busyConcurrency: 8,
      fanOutBatch: 10,
      fanOutAhead: 4,
    }).whileBusy;
    // busyConcurrency above concurrency is cut to it; a quarter of 3 would still be one slot.
    expect(busy).toMatchObject({ slots: 3, lookAhead: LOOK_AHEAD, claimAfter: 1, fanOutBatch: 10, fanOutAhead: 4 });
    expect(createCaps({ concurrency: 3, perWebhookConcurrency: 1 }).whileBusy.slots).toBe(1);
  });

  it('gives one team its configured share, never more than every slot, and at least one slot while busy', () => {
    const caps = createCaps({ concurrency: 10, perWebhookConcurrency: 2, perTeamConcurrency: 3, busyConcurrency: 2 });
    expect([caps.configured.perTeam, caps.whileBusy.perTeam]).toEqual([3, 1]);
    expect(createCaps({ concurrency: 4, perWebhookConcurrency: 2, perTeamConcurrency: 9 }).configured.perTeam).toBe(4);
    expect(createCaps({ concurrency: 5, perWebhookConcurrency: 2 }).configured.perTeam).toBe(3);
  });

  it('puts in force the caps of the moment, asking busy() each time', () => {
    let busy = false;
    const caps = createCaps({ concurrency: 8, perWebhookConcurrency: 2, busy: () => busy });
    expect(caps.now()).toBe(caps.configured);
    busy = true;
    expect(caps.now()).toBe(caps.whileBusy);
    busy = false;
    expect(caps.now().busy).toBe(false);
    expect(createCaps({ concurrency: 8, perWebhookConcurrency: 2 }).now().busy).toBe(false);
  });
});
