/**
 * How many deliveries may be in flight at once (to all, to one webhook, to one receiver), how many
 * claims are held per delivery in flight, how many finished deliveries make a claim, and how much
 * one fan-out writes: the configured caps, or the smaller ones of a busy spell.
 */
export interface Caps {
  /** While busy, `slots` counts receivers with deliveries in flight (one each), not deliveries. */
  readonly busy: boolean;
  readonly slots: number;
  readonly perWebhook: number;
  readonly perReceiver: number;
  /**
   * Deliveries of one team's subscriptions in flight at once (while busy, receivers with one in
   * flight): however many receivers a team has that hang or fail slowly, the other teams keep the
   * rest of the slots.
   */
  readonly perTeam: number;
  /** Claims held (waiting or being sent) per slot and per webhook or receiver cap. */
  readonly lookAhead: number;
  /** Deliveries finished since the last claim that make a finished delivery's wake-up claim. */
  readonly claimAfter: number;
  /** Attempts sent and not yet recorded (or claimed and waiting) beyond which nothing is claimed. */
  readonly maxUnrecorded: number;
  /** Most deliveries one fan-out statement writes. */
  readonly fanOutBatch: number;
  /** Deliveries waiting for their first attempt, per receiver, at which the fan-out stops for it. */
  readonly fanOutAhead: number;
}

/** What the caps are made from: the dispatcher's options of the same names. */
export interface CapsSettings {
  readonly concurrency: number;
  readonly perWebhookConcurrency: number;
  /** Default perWebhookConcurrency. */
  readonly perReceiverConcurrency?: number;
  /** Default a quarter of `concurrency`, at least 1. */
  readonly busyConcurrency?: number;
  /** Default half of `concurrency` (rounded up); while busy, half of the busy slots. */
  readonly perTeamConcurrency?: number;
  /** Default DEFAULT_FAN_OUT_BATCH. */
  readonly fanOutBatch?: number;
  /** Default 2 fanOutBatch. */
  readonly fanOutAhead?: number;
  /** Whether the process is busy serving requests. Default: never. */
  readonly busy?: () => boolean;
}

export interface CapsInForce {
  /** The caps in force: the configured ones, or while the process is busy, the smaller ones. */
  now(): Caps;
  readonly configured: Caps;
  readonly whileBusy: Caps;
}

/** Most deliveries a fan-out statement writes: 10 events at 100 subscriptions, 1024 at one. */
export const DEFAULT_FAN_OUT_BATCH = 1024;
/**
 * Attempts sent and not yet recorded, per configured slot, beyond which nothing more is claimed
 * (recordings wait a little to go in groups: at 2,000 deliveries/s about 50 wait at any time).
 */
export const MAX_PENDING_PER_SLOT = 8;
/** Claims held (waiting or being sent), per slot and per webhook or receiver cap. */
export const LOOK_AHEAD = 2;
/**
 * The same while busy, with one delivery per receiver in flight: claims of a few at a time, each
 * once half of them have been sent, rather than a claim statement per delivery.
 */
export const BUSY_LOOK_AHEAD = 8;
/**
 * While busy, the fan-out writes what the busy deliveries will take next, and no more: a
 * statement of at most this many deliveries (at least one event, with every subscription), and
 * none while each receiver has that many waiting. The backlog stays in the events until the
 * requests stop, and a create never waits behind a statement writing a thousand rows (on the
 * embedded database, which runs in the serving thread, one such statement held every request
 * for about 100 ms).
 */
export const BUSY_FAN_OUT_BATCH = 32;

/**
 * The two sets of caps, and which is in force (asked of `busy()` at every claim, fan-out and start).
 * While busy, deliveries give way to requests: at most `busyConcurrency` receivers in flight, one
 * delivery each, and the fan-out writes only what those take next; never more claims held per
 * receiver than outside busy spells.
 */
export function createCaps(settings: CapsSettings): CapsInForce {
  const { concurrency, perWebhookConcurrency } = settings;
  const perReceiverConcurrency = settings.perReceiverConcurrency ?? perWebhookConcurrency;
  const busyConcurrency = Math.min(concurrency, settings.busyConcurrency ?? Math.max(1, Math.floor(concurrency / 4)));
  const perTeam = Math.min(concurrency, settings.perTeamConcurrency ?? Math.ceil(concurrency / 2));
  const busyLookAhead = Math.min(BUSY_LOOK_AHEAD, LOOK_AHEAD * perReceiverConcurrency);
  const fanOutBatch = settings.fanOutBatch ?? DEFAULT_FAN_OUT_BATCH;
  const fanOutAhead = settings.fanOutAhead ?? 2 * fanOutBatch;
  const busyFanOutBatch = Math.min(BUSY_FAN_OUT_BATCH, fanOutBatch);
  const maxUnrecorded = MAX_PENDING_PER_SLOT * concurrency;
  const configured: Caps = {
    busy: false,
    slots: concurrency,
    perWebhook: perWebhookConcurrency,
    perReceiver: perReceiverConcurrency,
    perTeam,
    lookAhead: LOOK_AHEAD,
    claimAfter: Math.max(1, Math.floor(concurrency / 4)),
    maxUnrecorded,
    fanOutBatch,
    fanOutAhead,
  };
  const whileBusy: Caps = {
    busy: true,
    slots: busyConcurrency,
    perWebhook: 1,
    perReceiver: 1,
    // The same share of the busy slots (receivers, one delivery each), at least one.
    perTeam: Math.max(1, Math.ceil((busyConcurrency * perTeam) / concurrency)),
    lookAhead: busyLookAhead,
    claimAfter: Math.max(1, busyLookAhead / 2),
    maxUnrecorded,
    fanOutBatch: busyFanOutBatch,
    fanOutAhead: Math.min(busyFanOutBatch, fanOutAhead),
  };
  const busy = settings.busy ?? (() => false);
  return { now: () => (busy() ? whileBusy : configured), configured, whileBusy };
}
