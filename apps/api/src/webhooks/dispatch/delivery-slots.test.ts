import type { ClaimedDelivery } from '@plant-store/db';
import { describe, expect, it } from 'vitest';
import { claimedDelivery } from '../../test-support/claimed-delivery.js';
import { type Caps, createCaps } from './caps.js';
import { createDeliverySlots } from './delivery-slots.js';

const A = 'http://a.example';
const B = 'http://b.example';
const C = 'http://c.example';

/** Slots under `caps` (changed at will), whose started deliveries wait for the test to free them. */
function slotsUnder(initial: Caps) {
  const state = { caps: initial, at: 0, stopping: false, freed: 0 };
  const started: Array<{ readonly claimed: ClaimedDelivery; readonly freeSlot: () => void }> = [];
  const expired: ClaimedDelivery[] = [];
  const slots = createDeliverySlots({
    caps: () => state.caps,
    stopping: () => state.stopping,
    start: (claimed, freeSlot) => started.push({ claimed, freeSlot }),
    expire: (claimed) => expired.push(claimed),
    slotFreed: () => {
      state.freed += 1;
    },
    clock: () => state.at,
  });
  /** Enqueues a claim for `webhookId` (of `team`) at `receiver`, to start by `startBy`. */
  const enqueue = (webhookId: string, receiver: string, startBy = 1_000, team = 'default') => {
    const claimed = claimedDelivery({ webhookId, url: `${receiver}/hook`, team });
    slots.enqueue(claimed, receiver, startBy);
    return claimed;
  };
  const startedIds = () => started.map(({ claimed }) => claimed.deliveryId);
  return { slots, state, started, expired, enqueue, startedIds };
}

describe('createDeliverySlots', () => {
  it('starts what waits oldest first, as many as there are slots, and holds every claim until its slot is freed', () => {
    const { slots, enqueue, startedIds, started, state } = slotsUnder(
      createCaps({ concurrency: 2, perWebhookConcurrency: 2, perTeamConcurrency: 2 }).configured,
    );
    const claims = [enqueue('w1', A), enqueue('w2', B), enqueue('w3', C)];
    expect(slots.held.byReceiver).toEqual(
      new Map([
        [A, 1],
        [B, 1],
        [C, 1],
      ]),
    );
    slots.pump();
    expect(startedIds()).toEqual([claims[0]?.deliveryId, claims[1]?.deliveryId]);
    expect({ sending: slots.sending, waiting: slots.waiting }).toEqual({ sending: 2, waiting: 1 });

    // A freed slot starts the next at once; freeing twice frees once.
    started[0]?.freeSlot();
    started[0]?.freeSlot();
    expect(startedIds()).toEqual(claims.map((claimed) => claimed.deliveryId));
    expect(state.freed).toBe(1);
    expect(slots.held.byReceiver).toEqual(
      new Map([
        [B, 1],
        [C, 1],
      ]),
    );
    expect(slots.held.byWebhook).toEqual(
      new Map([
        ['w2', 1],
        ['w3', 1],
      ]),
    );
  });

  it('lets later claims start past one held back by its webhook or receiver cap', () => {
    const { slots, enqueue, startedIds } = slotsUnder(
      createCaps({ concurrency: 8, perWebhookConcurrency: 1, perReceiverConcurrency: 2 }).configured,
    );
    const first = enqueue('w1', A);
    enqueue('w1', A); // its webhook's one slot is taken
    const third = enqueue('w2', A);
    enqueue('w3', A); // its receiver's two slots are taken
    const fifth = enqueue('w4', B);
    slots.pump();
    expect(startedIds()).toEqual([first.deliveryId, third.deliveryId, fifth.deliveryId]);
    expect(slots.waiting).toBe(2);
  });

  it('while busy, counts receivers with requests under way, not requests: one hanging with many keeps one slot', () => {
    const caps = createCaps({ concurrency: 8, perWebhookConcurrency: 4, busyConcurrency: 2, perTeamConcurrency: 8 });
    const { slots, state, enqueue, startedIds } = slotsUnder(caps.configured);
    for (let index = 0; index < 4; index++) enqueue('stuck', A);
    slots.pump();
    expect(slots.sending).toBe(4);

    state.caps = caps.whileBusy;
    enqueue('stuck', A);
    const healthy = enqueue('healthy', B);
    enqueue('other', C);
    slots.pump();
    // A holds one receiver's slot with its four, B takes the other; A's fifth and C wait.
    expect(startedIds().slice(4)).toEqual([healthy.deliveryId]);
    expect(slots.waiting).toBe(2);
  });

  it('keeps a team to its share of the slots, however many receivers it has, leaving the rest to the others', () => {
    const caps = createCaps({ concurrency: 6, perWebhookConcurrency: 2, perTeamConcurrency: 3, busyConcurrency: 4 });
    const { slots, state, enqueue, startedIds, started } = slotsUnder(caps.configured);
    // Red's four receivers would take every slot; it gets three, and blue's claims start.
    const red = [A, B, C, 'http://d.example'].map((receiver, index) => enqueue(`red-${index}`, receiver, 1_000, 'red'));
    const blue = [
      enqueue('blue-0', 'http://e.example', 1_000, 'blue'),
      enqueue('blue-1', 'http://f.example', 1_000, 'blue'),
    ];
    slots.pump();
    expect(startedIds()).toEqual([...red.slice(0, 3), ...blue].map((claimed) => claimed.deliveryId));
    expect(slots.held.byTeam).toEqual(
      new Map([
        ['red', 4],
        ['blue', 2],
      ]),
    );
    // One of red's finishing lets its fourth start.
    started[0]?.freeSlot();
    expect(startedIds().at(-1)).toBe(red[3]?.deliveryId);

    // While busy, a team's share counts receivers: with blue's two done, red has three under way
    // (above its two) and a slot is free; red's next waits, blue's starts.
    started[3]?.freeSlot();
    started[4]?.freeSlot();
    state.caps = caps.whileBusy;
    expect(caps.whileBusy.perTeam).toBe(2);
    const waitingRed = enqueue('red-9', 'http://g.example', 1_000, 'red');
    const nextBlue = enqueue('blue-9', 'http://h.example', 1_000, 'blue');
    slots.pump();
    expect(startedIds().slice(-1)).toEqual([nextBlue.deliveryId]);
    expect(startedIds()).not.toContain(waitingRed.deliveryId);
  });

  it('gives back a claim that waited past its start-by time, and starts the next in its place', () => {
    const { slots, state, enqueue, started, startedIds, expired } = slotsUnder(
      createCaps({ concurrency: 1, perWebhookConcurrency: 1 }).configured,
    );
    enqueue('w1', A);
    const late = enqueue('w2', B, 100);
    const later = enqueue('w3', C, 1_000);
    slots.pump();
    state.at = 101;
    started[0]?.freeSlot();
    expect(expired).toEqual([late]);
    expect(startedIds().at(-1)).toBe(later.deliveryId);
    expect(slots.held.byReceiver).toEqual(new Map([[C, 1]]));
  });

  it('has room for lookAhead claims per slot, less those sending and waiting, and fewer while recordings fall behind', () => {
    const caps = createCaps({ concurrency: 4, perWebhookConcurrency: 1 }).configured;
    const { slots, enqueue } = slotsUnder(caps);
    expect(slots.room(caps, 0)).toBe(8);
    for (const webhookId of ['w1', 'w2', 'w3', 'w4', 'w5']) enqueue(webhookId, A);
    slots.pump();
    // One sending (one per receiver: perReceiver defaults to perWebhook), four waiting.
    expect(slots.room(caps, 1)).toBe(8 - 1 - 4);
    // 32 tasks not yet recorded at most (8 per slot): 30 under way leave none.
    expect(slots.room(caps, 30)).toBe(32 - 30 - 4);
  });

  it('lets go of every claim waiting, and starts nothing once stopping', () => {
    const { slots, state, enqueue, started } = slotsUnder(
      createCaps({ concurrency: 1, perWebhookConcurrency: 1 }).configured,
    );
    enqueue('w1', A);
    const waiting = [enqueue('w2', B), enqueue('w3', C)];
    slots.pump();
    state.stopping = true;
    started[0]?.freeSlot();
    expect(started).toHaveLength(1);
    expect(slots.takeWaiting()).toEqual(waiting);
    expect({ waiting: slots.waiting, held: slots.held.byReceiver.size }).toEqual({ waiting: 0, held: 0 });
  });
});
