import type { ClaimedDelivery } from '@plant-store/db';
import type { Caps } from './caps.js';
import type { HeldClaims } from './claimer.js';

export interface DeliverySlotsOptions {
  /** The caps in force, asked at every pump. */
  readonly caps: () => Caps;
  /** Whether the dispatcher is closing: then nothing more starts. */
  readonly stopping: () => boolean;
  /**
   * Sends a delivery that now holds a slot; `freeSlot` (idempotent) gives the slot back once its
   * request is over (its recording needs none: the lease keeps the delivery from any claim).
   */
  readonly start: (claimed: ClaimedDelivery, freeSlot: () => void) => void;
  /** A claim that waited past its `startBy`: to be given back (its lease could end mid-attempt). */
  readonly expire: (claimed: ClaimedDelivery) => void;
  /** A slot was freed (after what was ready started in its place). */
  readonly slotFreed: () => void;
  /** Milliseconds, against `startBy`. Default Date.now. */
  readonly clock?: () => number;
}

export interface DeliverySlots {
  /** Claims held (waiting or being sent), per webhook, receiver and team. */
  readonly held: HeldClaims;
  /** Claims waiting for a slot. */
  readonly waiting: number;
  /** Deliveries whose request is under way. */
  readonly sending: number;
  /** Holds a claim until it has been sent; it waits for a slot, to start before `startBy`. */
  enqueue(claimed: ClaimedDelivery, receiver: string, startBy: number): void;
  /** Starts what is waiting, oldest first, as far as the slots and the per-webhook, per-receiver and per-team caps allow. */
  pump(): void;
  /**
   * How many more claims may be held: `lookAhead` per slot, and no more than `maxUnrecorded` with
   * the `unfinished` tasks (attempts not yet recorded: the database being slow holds claims back).
   */
  room(caps: Caps, unfinished: number): number;
  /** Lets go of every claim waiting, for them to be given back (shutdown). */
  takeWaiting(): ClaimedDelivery[];
}

interface Waiting {
  readonly claimed: ClaimedDelivery;
  readonly receiver: string;
  readonly startBy: number;
}

/**
 * The ready queue and the slots: claims run ahead of the slots (`lookAhead` times as many), so a
 * freed slot starts the next delivery at once. Owns the claims held and the requests under way,
 * counted in all, per webhook, per receiver (the URL's origin, whatever the subscriptions
 * pointing at it) and per team (the subscription's): a receiver that hangs ties up its own slots
 * until its attempts time out, not everyone's, and a team whose many receivers hang ties up its
 * team's share, not the other teams'; one waiting behind its caps lets later claims for others start first.
 *
 * While busy, `slots` counts receivers with requests under way, not requests: a busy spell can
 * begin with more in flight than it allows, to a receiver that hangs among them, and they keep one
 * receiver's slot, not all.
 */
export function createDeliverySlots(options: DeliverySlotsOptions): DeliverySlots {
  const { caps: capsNow, stopping, start, expire, slotFreed, clock = Date.now } = options;
  const heldByWebhook = new Map<string, number>();
  const heldByReceiver = new Map<string, number>();
  const heldByTeam = new Map<string, number>();
  let sending = 0;
  const sendingByWebhook = new Map<string, number>();
  const sendingByReceiver = new Map<string, number>();
  const sendingByTeam = new Map<string, number>();
  /** Per team, its receivers with requests under way (and how many each): while busy, its share counts receivers. */
  const receiversByTeam = new Map<string, Map<string, number>>();
  /** Oldest first. */
  const ready: Waiting[] = [];

  const hold = ({ webhookId, team }: ClaimedDelivery, receiver: string, change: 1 | -1) => {
    adjust(heldByWebhook, webhookId, change);
    adjust(heldByReceiver, receiver, change);
    adjust(heldByTeam, team, change);
  };
  const slotFree = (caps: Caps): boolean => (caps.busy ? sendingByReceiver.size < caps.slots : sending < caps.slots);
  const adjustReceiverOf = (team: string, receiver: string, change: 1 | -1) => {
    const receivers = receiversByTeam.get(team) ?? new Map<string, number>();
    adjust(receivers, receiver, change);
    if (receivers.size > 0) receiversByTeam.set(team, receivers);
    else receiversByTeam.delete(team);
  };
  /** Whether the team has its share under way: deliveries, or while busy, receivers. */
  const teamFull = (caps: Caps, team: string): boolean =>
    (caps.busy ? (receiversByTeam.get(team)?.size ?? 0) : (sendingByTeam.get(team) ?? 0)) >= caps.perTeam;

  function startDelivery({ claimed, receiver }: Waiting): void {
    const { webhookId, team } = claimed;
    sending += 1;
    adjust(sendingByWebhook, webhookId, +1);
    adjust(sendingByReceiver, receiver, +1);
    adjust(sendingByTeam, team, +1);
    adjustReceiverOf(team, receiver, +1);
    let freed = false;
    start(claimed, () => {
      if (freed) return;
      freed = true;
      sending -= 1;
      adjust(sendingByWebhook, webhookId, -1);
      adjust(sendingByReceiver, receiver, -1);
      adjust(sendingByTeam, team, -1);
      adjustReceiverOf(team, receiver, -1);
      hold(claimed, receiver, -1);
      pump();
      slotFreed();
    });
  }

  function pump(): void {
    if (stopping()) return;
    const caps = capsNow();
    for (let index = 0; index < ready.length && slotFree(caps); ) {
      const entry = ready[index];
      if (entry === undefined) break;
      const { claimed, receiver } = entry;
      if (clock() > entry.startBy) {
        // Waited too long behind a slow receiver: its lease could end mid-attempt. Given back.
        ready.splice(index, 1);
        hold(claimed, receiver, -1);
        expire(claimed);
        continue;
      }
      if (
        (sendingByReceiver.get(receiver) ?? 0) >= caps.perReceiver ||
        (sendingByWebhook.get(claimed.webhookId) ?? 0) >= caps.perWebhook ||
        teamFull(caps, claimed.team)
      ) {
        index += 1;
        continue;
      }
      ready.splice(index, 1);
      startDelivery(entry);
    }
  }

  return {
    held: { byWebhook: heldByWebhook, byReceiver: heldByReceiver, byTeam: heldByTeam },
    get waiting() {
      return ready.length;
    },
    get sending() {
      return sending;
    },
    enqueue(claimed, receiver, startBy) {
      hold(claimed, receiver, +1);
      ready.push({ claimed, receiver, startBy });
    },
    pump,
    room: (caps, unfinished) =>
      Math.min(
        caps.lookAhead * caps.slots - Math.min(sending, caps.slots) - ready.length,
        caps.maxUnrecorded - unfinished - ready.length,
      ),
    takeWaiting() {
      const left = ready.splice(0);
      for (const { claimed, receiver } of left) hold(claimed, receiver, -1);
      return left.map(({ claimed }) => claimed);
    },
  };
}

function adjust(counts: Map<string, number>, key: string, change: 1 | -1): void {
  const value = (counts.get(key) ?? 0) + change;
  if (value > 0) counts.set(key, value);
  else counts.delete(key);
}
