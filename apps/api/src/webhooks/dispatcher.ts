import { type AttemptOutcome, type ClaimedDelivery, type Database, receiverOrigin } from '@plant-store/db';
import type { Agent } from 'undici';
import { createLogger, type Logger } from '../logger.js';
import type { DeliveryTracing } from '../tracing/tracing.js';
import { nextAttemptDelay } from './retry-schedule.js';
import type { postWebhook as PostWebhook, PostWebhookResult } from './safe-http.js';
import type { signWebhook as SignWebhook } from './sign.js';
import type { ResolveHost } from './url-policy.js';

/**
 * Sends the webhook deliveries the database holds: at least once, each within its own deadline,
 * none able to hold up another.
 *
 * One loop per process claims due deliveries (a lease in the database: every replica runs one,
 * and none sends what another holds), sends each claim concurrently and records how it went.
 * It claims as many as there are free slots (`concurrency`), at most `perWebhookConcurrency` per
 * webhook in flight here (a finished one's slot is topped up at once), and never more than
 * `perReceiverConcurrency` in flight to one receiver (the URL's origin, whatever the number of
 * subscriptions pointing at it): a receiver that hangs ties up its own slots until its attempts
 * time out, not everyone's. Idle, it polls every
 * `pollMs`; `nudge()` (a plant was created) and a finished delivery wake it at once.
 *
 * While the process is busy serving requests (`busy()`, asked before every claim and every start),
 * deliveries give way: at most `busyConcurrency` in flight, one per receiver (and per webhook), and
 * creates no longer wake it (it fans out on its poll, and claims as deliveries finish); the fan-out
 * writes only what those deliveries take next (BUSY_FAN_OUT_BATCH). Requests
 * keep the CPU; deliveries go on, fewer at a time (a hanging receiver still holds back only
 * itself), and catch up at full speed once the requests stop.
 *
 * Before it claims, a nudged or polling loop fans out the events not fanned out yet (any
 * replica's: one delivery per subscription, written by the store, `fanOutBatch` deliveries a
 * statement at most): the create writes only its event, and the cost of many subscriptions is
 * paid here, off the request's path. It fans out only as fast as it delivers, receiver by
 * receiver: once every receiver it wrote for has `fanOutAhead` deliveries waiting for their first
 * attempt, it sends those first (counted here per receiver; a receiver's count goes back to zero
 * when a claim finds nothing it may take while that receiver was not at its cap as the claim was
 * made: other replicas may have sent them). A receiver that hangs, at its cap, holds back only
 * itself: the fan-out goes on while any other receiver has fewer waiting. So the backlog of many
 * subscriptions stays in the events, not in the deliveries. It asks which receivers have
 * subscriptions once every `pollMs`, and when events come after a quiet spell: one it has not
 * written for yet (a new subscription) has none waiting, so the fan-out goes on for it (writing
 * the busy receivers' rows ahead, as beside a hanging one), and one with no subscription left no
 * longer counts.
 */

export type DeliveryStore = Pick<
  Database,
  'fanOutEvents' | 'webhookReceivers' | 'claimDeliveries' | 'recordAttempt' | 'releaseClaim'
>;

/**
 * What became of an attempt: recorded as `delivered`, `retrying` (failed, another is scheduled)
 * or `failed` (failed, no more); `lease-lost` (another dispatcher owns the delivery now, or the
 * webhook was deleted: nothing recorded); `unrecorded` (the database was out of reach: the lease
 * expires and the delivery is attempted again).
 */
export type AttemptResult = 'delivered' | 'retrying' | 'failed' | 'lease-lost' | 'unrecorded';

export interface WebhookDispatcherOptions {
  readonly store: DeliveryStore;
  /** Delays after attempt 1, 2, ...: length + 1 attempts in all. */
  readonly retryScheduleMs: readonly number[];
  /** One attempt's deadline: connect, send, response headers and the capped body read. */
  readonly timeoutMs: number;
  /**
   * How often to look for due deliveries when nothing wakes the loop (other replicas' events,
   * retries coming due).
   */
  readonly pollMs: number;
  /**
   * How long a claim is held, then another dispatcher may take the delivery over; more than
   * `timeoutMs`, so an attempt ends before its lease does.
   */
  readonly leaseMs: number;
  /** Most deliveries one fan-out statement writes. Default 1024. */
  readonly fanOutBatch?: number;
  /** Most deliveries fanned out for one receiver and not yet claimed, before it stops fanning out for it. Default 2 fanOutBatch. */
  readonly fanOutAhead?: number;
  /** Deliveries in flight at once, in this process. */
  readonly concurrency: number;
  /** Deliveries to one webhook in flight at once (claimed together). */
  readonly perWebhookConcurrency: number;
  /** Deliveries to one receiver (scheme, host and port), all its webhooks together, in flight at once. Default perWebhookConcurrency. */
  readonly perReceiverConcurrency?: number;
  readonly allowPrivateNetworks: boolean;
  /** Default 4096. */
  readonly maxResponseBytes?: number;
  /** How long close() lets deliveries in flight finish before aborting them. Default `timeoutMs`. */
  readonly drainMs?: number;
  readonly log?: Logger;
  /** Jitter source, [0, 1). Default Math.random. */
  readonly random?: () => number;
  readonly now?: () => Date;
  /** Host name resolution for outgoing connections. Default: the system resolver. */
  readonly resolve?: ResolveHost;
  /** Called once per attempt with its result: for metrics. */
  readonly observeAttempt?: (result: AttemptResult) => void;
  /** A span per attempt (the request sent, not its recording), its traceparent sent along. Absent: none. */
  readonly tracing?: DeliveryTracing;
  /** Whether the process is busy serving requests, so that deliveries give way. Default: never. */
  readonly busy?: () => boolean;
  /** Deliveries in flight at once while `busy()`, at most one per receiver. Default a quarter of `concurrency`. */
  readonly busyConcurrency?: number;
}

export interface WebhookDispatcher {
  /** Starts the loop (once; after close(), never). */
  start(): void;
  /** Look for due deliveries now, not at the next poll. */
  nudge(): void;
  /**
   * Stops claiming, hands back what it claimed and has not started, lets deliveries in flight
   * finish for up to `drainMs`, then aborts the rest and hands their claims back (so another
   * replica may send them at once). Never rejects.
   */
  close(): Promise<void>;
}

/** What sends an attempt: the HTTP client's agent and functions, and the signer. */
interface Sender {
  readonly agent: Agent;
  readonly postWebhook: typeof PostWebhook;
  readonly signWebhook: typeof SignWebhook;
}

async function loadSenderModules(
  allowPrivateNetworks: boolean,
  timeoutMs: number,
  resolve: ResolveHost | undefined,
): Promise<Sender> {
  const [http, sign] = await Promise.all([import('./safe-http.js'), import('./sign.js')]);
  const agent = http.createSafeAgent({ allowPrivateNetworks, timeoutMs, ...(resolve ? { resolve } : {}) });
  return { agent, postWebhook: http.postWebhook, signWebhook: sign.signWebhook };
}

/** Most deliveries a fan-out statement writes: 10 events at 100 subscriptions, 1024 at one. */
const DEFAULT_FAN_OUT_BATCH = 1024;

/**
 * Attempts sent and not yet recorded, per configured slot, beyond which nothing more is claimed
 * (recordings wait a little to go in groups: at 2,000 deliveries/s about 50 wait at any time).
 */
const MAX_PENDING_PER_SLOT = 8;
/** Claims held (waiting or being sent), per slot and per webhook or receiver cap. */
const LOOK_AHEAD = 2;
/**
 * The same while busy, with one delivery per receiver in flight: claims of a few at a time, each
 * once half of them have been sent, rather than a claim statement per delivery.
 */
const BUSY_LOOK_AHEAD = 8;
/**
 * While busy, the fan-out writes what the busy deliveries will take next, and no more: a
 * statement of at most this many deliveries (at least one event, with every subscription), and
 * none while each receiver has that many waiting. The backlog stays in the events until the
 * requests stop, and a create never waits behind a statement writing a thousand rows (on the
 * embedded database, which runs in the serving thread, one such statement held every request
 * for about 100 ms).
 */
const BUSY_FAN_OUT_BATCH = 32;
/**
 * Shortest time between two checks of which receivers have subscriptions, when events come after
 * a quiet spell (otherwise once a poll interval).
 */
const RECEIVERS_RECHECK_MS = 100;
/** A waiting claim starts no later than this before its lease ends, less an attempt's timeout. */
const LEASE_MARGIN_MS = 1_000;

/**
 * How many deliveries may be in flight at once (to all, to one webhook, to one receiver), how many
 * claims are held per delivery in flight, and how many finished deliveries make a claim.
 */
interface Caps {
  /** While busy, `slots` counts receivers with deliveries in flight (one each), not deliveries. */
  readonly busy: boolean;
  readonly slots: number;
  readonly perWebhook: number;
  readonly perReceiver: number;
  readonly lookAhead: number;
  readonly claimAfter: number;
  /** Most deliveries one fan-out statement writes. */
  readonly fanOutBatch: number;
  /** Deliveries waiting for their first attempt, per receiver, at which the fan-out stops for it. */
  readonly fanOutAhead: number;
}

/** Repeated warnings (database down) at most this often. */
const WARN_INTERVAL_MS = 60_000;

export function createWebhookDispatcher(options: WebhookDispatcherOptions): WebhookDispatcher {
  checkOptions(options);
  const { store, retryScheduleMs, timeoutMs, pollMs, leaseMs, concurrency, perWebhookConcurrency } = options;
  const log = options.log ?? createLogger({ level: 'silent' });
  const random = options.random ?? Math.random;
  const now = options.now ?? (() => new Date());
  const observeAttempt = options.observeAttempt ?? (() => {});
  const { tracing } = options;
  // The HTTP client and the signing library are loaded with the first delivery: a service with
  // no subscription never pays for them (undici alone is about 20 MB of memory).
  let sender: Promise<Sender> | undefined;
  const loadSender = () => {
    sender ??= loadSenderModules(options.allowPrivateNetworks, timeoutMs, options.resolve);
    return sender;
  };
  const shutdown = new AbortController();
  const wakeup = createWakeup();
  const inFlight = new Set<Promise<void>>();
  const heldByWebhook = new Map<string, number>();
  const heldByReceiver = new Map<string, number>();
  const perReceiverConcurrency = options.perReceiverConcurrency ?? perWebhookConcurrency;
  const busy = options.busy ?? (() => false);
  const busyConcurrency = Math.min(concurrency, options.busyConcurrency ?? Math.max(1, Math.floor(concurrency / 4)));
  // Never more claims held per receiver than outside busy spells.
  const busyLookAhead = Math.min(BUSY_LOOK_AHEAD, LOOK_AHEAD * perReceiverConcurrency);
  const fanOutBatch = options.fanOutBatch ?? DEFAULT_FAN_OUT_BATCH;
  const fanOutAhead = options.fanOutAhead ?? 2 * fanOutBatch;
  const busyFanOutBatch = Math.min(BUSY_FAN_OUT_BATCH, fanOutBatch);
  const busyFanOutAhead = Math.min(busyFanOutBatch, fanOutAhead);
  /** The caps in force: the configured ones, or while the process is busy, the smaller ones. */
  const capsNow = (): Caps =>
    busy()
      ? {
          busy: true,
          slots: busyConcurrency,
          perWebhook: 1,
          perReceiver: 1,
          lookAhead: busyLookAhead,
          claimAfter: Math.max(1, busyLookAhead / 2),
          fanOutBatch: busyFanOutBatch,
          fanOutAhead: busyFanOutAhead,
        }
      : {
          busy: false,
          slots: concurrency,
          perWebhook: perWebhookConcurrency,
          perReceiver: perReceiverConcurrency,
          lookAhead: LOOK_AHEAD,
          claimAfter: Math.max(1, Math.floor(concurrency / 4)),
          fanOutBatch,
          fanOutAhead,
        };
  /**
   * Whether another delivery may start: a slot free, or while busy, a receiver's slot (receivers
   * with deliveries in flight fewer than the slots). A busy spell can begin with more in flight
   * than it allows, to a receiver that hangs among them: they keep one receiver's slot, not all.
   */
  const slotFree = (caps: Caps): boolean => (caps.busy ? sendingByReceiver.size < caps.slots : sending < caps.slots);
  const claimTrouble = createTroubleReporter(log, 'webhook dispatch cannot claim deliveries; retrying');
  const fanOutTrouble = createTroubleReporter(log, 'webhook dispatch cannot fan out events; retrying');
  // Events may be waiting from before this process started (or from replicas that do not dispatch).
  let fanOutDue = true;
  let lastFanOutAt = 0;
  let receiversCheckedAt = -Infinity;
  let fanOutFoundNone = true;
  /**
   * Deliveries this process fanned out that no claim of its own has taken yet, per receiver it
   * fans out for (an estimate; 0 for a receiver with nothing waiting, which keeps the fan-out
   * going for it).
   */
  const aheadByReceiver = new Map<string, number>();
  /** Whether every receiver it fans out for has `ahead` waiting (none known: no). */
  const paced = (ahead: number): boolean => {
    if (aheadByReceiver.size === 0) return false;
    for (const waiting of aheadByReceiver.values()) if (waiting < ahead) return false;
    return true;
  };
  const mayFanOut = (caps: Caps): boolean => fanOutDue && !paced(caps.fanOutAhead);
  const recordTrouble = createTroubleReporter(
    log,
    'webhook attempt could not be recorded; the delivery is retried when its lease expires',
  );
  let loop: Promise<void> | undefined;
  let stopping = false;
  let closing: Promise<void> | undefined;

  /** Attempts whose request is under way: what the slots limit (a recording after it holds none). */
  let sending = 0;
  const sendingByWebhook = new Map<string, number>();
  const sendingByReceiver = new Map<string, number>();
  /**
   * Claimed and waiting for a slot, oldest first: claims run ahead of the slots (LOOK_AHEAD times
   * as many), so that a freed slot starts the next delivery at once, not after a claim's round
   * trip. Each must start before `startBy` (its lease, less an attempt's timeout), or is given back.
   */
  const ready: Array<{ readonly claimed: ClaimedDelivery; readonly receiver: string; readonly startBy: number }> = [];
  /** Claim whatever `finished` says: nudged, polled, or the last claim was full. */
  let claimAnyway = true;
  /**
   * Requests finished since the last claim: a wake-up by a finished delivery claims only once
   * `claimAfter` of them have (each claim is a statement that scans every receiver with room:
   * fewer, larger claims leave the database to the creates).
   */
  let finished = 0;

  async function run(): Promise<void> {
    while (!stopping) {
      // Busy with deliveries, it may never sleep a whole poll: events still get fanned out.
      if (Date.now() - lastFanOutAt >= pollMs) fanOutDue = true;
      // Which receivers have subscriptions: every poll interval, and first thing when events
      // come again after a fan-out that found none (subscriptions may have changed meanwhile).
      const sinceCheck = Date.now() - receiversCheckedAt;
      if (fanOutDue && (sinceCheck >= pollMs || (fanOutFoundNone && sinceCheck >= RECEIVERS_RECHECK_MS))) {
        await checkReceivers();
      }
      const fanOutCaps = capsNow();
      if (mayFanOut(fanOutCaps)) {
        fanOutDue = false;
        // Some were waiting: more may be (they are fanned out before the next claim).
        if ((await fanOut(fanOutCaps.fanOutBatch)) > 0) fanOutDue = true;
        if (stopping) return;
      }
      // Recordings behind (the database is slow) hold back new claims too, past a bound.
      const caps = capsNow();
      const room = Math.min(
        caps.lookAhead * caps.slots - Math.min(sending, caps.slots) - ready.length,
        MAX_PENDING_PER_SLOT * concurrency - inFlight.size - ready.length,
      );
      if (room > 0 && (finished >= caps.claimAfter || claimAnyway)) {
        claimAnyway = false;
        finished = 0;
        // Which receivers are at their cap as the claim is made (deliveries finishing during its
        // round trip free room it could not have used): nothing of theirs comes, for that reason
        // (its cap, or its one webhook's when that is lower).
        const receiverFull = caps.lookAhead * Math.min(caps.perReceiver, caps.perWebhook);
        const fullAtClaim = new Set<string>();
        for (const [receiver, held] of heldByReceiver) if (held >= receiverFull) fullAtClaim.add(receiver);
        const claims = await claim(room, caps);
        if (stopping) {
          await Promise.all((claims ?? []).map(release));
          await releaseReady();
          return;
        }
        if (claims !== null) {
          // Nothing it may take is due: for a receiver at its cap here when it claimed, because
          // of the cap (its count stands, and paces the fan-out); for any other, what was fanned
          // out for it has been sent, perhaps by other replicas (its count goes back to zero, or
          // it would wait for ever for claims that others made).
          if (claims.length === 0) {
            for (const receiver of aheadByReceiver.keys()) {
              if (!fullAtClaim.has(receiver)) aheadByReceiver.set(receiver, 0);
            }
          }
          const startBy = Date.now() + leaseMs - timeoutMs - Math.min(LEASE_MARGIN_MS, (leaseMs - timeoutMs) / 2);
          for (const claimed of claims) {
            const receiver = receiverOrigin(claimed.url);
            const waiting = aheadByReceiver.get(receiver);
            if (claimed.attemptNumber === 1 && waiting !== undefined && waiting > 0) {
              aheadByReceiver.set(receiver, waiting - 1);
            }
            hold(claimed.webhookId, receiver, +1);
            ready.push({ claimed, receiver, startBy });
          }
          pump();
          // A full claim: more may be due. Otherwise wait (the next one is due, nudged or polled).
          if (claims.length >= room) {
            claimAnyway = true;
            continue;
          }
        }
      }
      if (mayFanOut(capsNow())) continue;
      // A poll looks for other replicas' events too; a finished delivery's wake-up only claims,
      // and only once `claimAfter` have finished since the last claim.
      if ((await wakeup.sleep(pollMs)) !== 'woken') {
        fanOutDue = true;
        claimAnyway = true;
      }
    }
  }

  /** Claims held here (waiting or being sent), per webhook and per receiver: what claims count. */
  function hold(webhookId: string, receiver: string, change: 1 | -1): void {
    adjust(heldByWebhook, webhookId, change);
    adjust(heldByReceiver, receiver, change);
  }

  /** Starts what is ready, oldest first, as far as the slots and the per-webhook and per-receiver caps allow. */
  function pump(): void {
    if (stopping) return;
    const caps = capsNow();
    for (let index = 0; index < ready.length && slotFree(caps); ) {
      const entry = ready[index];
      if (entry === undefined) break;
      const { claimed, receiver } = entry;
      if (Date.now() > entry.startBy) {
        // Waited too long behind a slow receiver: its lease could end mid-attempt. Given back.
        ready.splice(index, 1);
        hold(claimed.webhookId, receiver, -1);
        track(release(claimed));
        continue;
      }
      if (
        (sendingByReceiver.get(receiver) ?? 0) >= caps.perReceiver ||
        (sendingByWebhook.get(claimed.webhookId) ?? 0) >= caps.perWebhook
      ) {
        index += 1;
        continue;
      }
      ready.splice(index, 1);
      startDelivery(claimed, receiver);
    }
  }

  /** Keeps `work` (which never rejects) among what close() waits for. */
  function track(work: Promise<void>): void {
    // The loop is woken once the task is gone: one woken before would still count it against
    // the bound on attempts not yet recorded, and might then sleep until the next poll.
    const task = work.finally(() => {
      inFlight.delete(task);
      wakeup.wake();
    });
    inFlight.add(task);
  }

  /** Hands back what is claimed and not started (shutdown). */
  async function releaseReady(): Promise<void> {
    const left = ready.splice(0);
    for (const { claimed, receiver } of left) hold(claimed.webhookId, receiver, -1);
    await Promise.all(left.map(({ claimed }) => release(claimed)));
  }

  /** Events fanned out by one statement of at most `batch` deliveries; 0 when the store failed (reported; the next poll retries). */
  async function fanOut(batch: number): Promise<number> {
    try {
      lastFanOutAt = Date.now();
      const { events, deliveriesByReceiver } = await store.fanOutEvents({ maxDeliveries: batch });
      fanOutTrouble.resolved('webhook dispatch fans out events again');
      fanOutFoundNone = events === 0;
      for (const [receiver, written] of deliveriesByReceiver) {
        aheadByReceiver.set(receiver, (aheadByReceiver.get(receiver) ?? 0) + written);
      }
      return events;
    } catch (error) {
      fanOutTrouble.report(error);
      return 0;
    }
  }

  /**
   * Which receivers have subscriptions: one not counted yet (new) joins with none waiting, and
   * one with no subscription left is no longer waited for. A failure is reported as the
   * fan-out's, and the counts stand until the next poll interval.
   */
  async function checkReceivers(): Promise<void> {
    receiversCheckedAt = Date.now();
    try {
      const receivers = new Set(await store.webhookReceivers());
      for (const receiver of receivers) if (!aheadByReceiver.has(receiver)) aheadByReceiver.set(receiver, 0);
      for (const receiver of aheadByReceiver.keys()) if (!receivers.has(receiver)) aheadByReceiver.delete(receiver);
    } catch (error) {
      fanOutTrouble.report(error);
    }
  }

  /** The claims, or null when the store failed (reported, then retried after `pollMs`). */
  async function claim(limit: number, caps: Caps): Promise<ClaimedDelivery[] | null> {
    try {
      const claims = await store.claimDeliveries({
        limit,
        perWebhookLimit: caps.lookAhead * caps.perWebhook,
        perReceiverLimit: caps.lookAhead * caps.perReceiver,
        busyReceivers: heldByReceiver,
        busyWebhooks: heldByWebhook,
        leaseMs,
      });
      claimTrouble.resolved('webhook dispatch claims deliveries again');
      return claims;
    } catch (error) {
      claimTrouble.report(error);
      return null;
    }
  }

  function startDelivery(claimed: ClaimedDelivery, receiver: string): void {
    const { webhookId } = claimed;
    sending += 1;
    adjust(sendingByWebhook, webhookId, +1);
    adjust(sendingByReceiver, receiver, +1);
    let slotFreed = false;
    // The slot is free once the request is over; the recording goes on without it (the lease
    // stays on the delivery until it is recorded, so no claim takes it meanwhile).
    const freeSlot = () => {
      if (slotFreed) return;
      slotFreed = true;
      sending -= 1;
      adjust(sendingByWebhook, webhookId, -1);
      adjust(sendingByReceiver, receiver, -1);
      hold(webhookId, receiver, -1);
      finished += 1;
      pump();
      wakeup.wake();
    };
    track(
      deliver(claimed, freeSlot)
        .catch((error: unknown) => log.error({ err: error, ...describeClaim(claimed) }, 'webhook delivery crashed'))
        // The loop is woken once the task is gone (track), with the recording done.
        .finally(() => {
          if (!slotFreed) freeSlot();
        }),
    );
  }

  async function deliver(claimed: ClaimedDelivery, freeSlot: () => void): Promise<void> {
    const attemptedAt = now();
    const result = await attempt(claimed, attemptedAt);
    freeSlot();
    if (shutdown.signal.aborted && result.statusCode === null) {
      // Cut short by close(): not the receiver's fault, so no attempt is recorded.
      await release(claimed);
      return;
    }
    const { statusCode, latencyMs, error } = result;
    const delivered = statusCode !== null && statusCode >= 200 && statusCode < 300;
    const delayMs = delivered ? null : nextAttemptDelay(retryScheduleMs, claimed.attemptNumber, random);
    const retryAt = delayMs === null ? null : new Date(now().getTime() + delayMs);
    const outcome: AttemptOutcome = { attemptedAt, statusCode, latencyMs, error, delivered, retryAt };
    const fields = { ...describeClaim(claimed), status: statusCode, latencyMs, error };
    let recorded: boolean;
    try {
      recorded = await store.recordAttempt(claimed, outcome);
      recordTrouble.resolved('webhook attempts are recorded again');
    } catch (trouble) {
      recordTrouble.report(trouble, fields);
      observeAttempt('unrecorded');
      return;
    }
    if (!recorded) {
      log.debug(fields, 'webhook attempt not recorded: lease lost');
      observeAttempt('lease-lost');
      return;
    }
    const outcomeName: AttemptResult = delivered ? 'delivered' : retryAt === null ? 'failed' : 'retrying';
    observeAttempt(outcomeName);
    log.debug({ ...fields, outcome: outcomeName, retryAt }, 'webhook attempt');
    if (outcomeName === 'failed') log.warn(fields, 'webhook delivery failed: no attempts left');
  }

  async function attempt(claimed: ClaimedDelivery, at: Date): Promise<PostWebhookResult> {
    const { agent, postWebhook, signWebhook } = await loadSender();
    let headers: Record<string, string>;
    try {
      headers = signWebhook(claimed.secrets, claimed.eventId, claimed.payload, at);
    } catch (error) {
      // A corrupt secret. Not logged: the error could quote it.
      log.error(
        { ...describeClaim(claimed), errorType: error instanceof Error ? error.name : typeof error },
        'webhook signing failed',
      );
      return { statusCode: null, latencyMs: 0, error: 'could not sign the request' };
    }
    const span = tracing?.start(claimed, headers);
    const result = await postWebhook(agent, claimed.url, claimed.payload, headers, {
      timeoutMs,
      signal: shutdown.signal,
      ...(options.maxResponseBytes === undefined ? {} : { maxResponseBytes: options.maxResponseBytes }),
    });
    if (span !== undefined) tracing?.end(span, result);
    return result;
  }

  async function release(claimed: ClaimedDelivery): Promise<void> {
    try {
      await store.releaseClaim(claimed);
    } catch (error) {
      // The lease then simply runs out.
      log.debug({ err: error, ...describeClaim(claimed) }, 'webhook claim could not be released');
    }
  }

  async function drainAndStop(): Promise<void> {
    const drainMs = options.drainMs ?? timeoutMs;
    const deadline = Date.now() + drainMs;
    wakeup.wake();
    await settledWithin(loop ? [loop] : [], drainMs);
    // Claimed and not started: handed back at once, for another replica to send.
    await releaseReady();
    await settledWithin([...inFlight], Math.max(0, deadline - Date.now()));
    shutdown.abort();
    // Aborted attempts end at once and release their claims; the loop, if still in a claim, ends
    // when the claim does (and releases what it got).
    await settledWithin([...(loop ? [loop] : []), ...inFlight], Math.max(drainMs, 1000));
    if (sender) await (await sender).agent.destroy().catch(() => {});
  }

  return {
    start() {
      if (loop !== undefined || stopping) return;
      loop = run().catch((error: unknown) => log.error({ err: error }, 'webhook dispatch loop crashed'));
    },
    nudge() {
      // Busy: the poll and the deliveries finishing pick the events up; a wake-up per create
      // would fan out and claim on every one of them.
      if (busy()) return;
      fanOutDue = true;
      wakeup.wake('nudged');
    },
    close() {
      stopping = true;
      closing ??= drainAndStop().catch((error: unknown) =>
        log.error({ err: error }, 'webhook dispatcher close failed'),
      );
      return closing;
    },
  };
}

function checkOptions(options: WebhookDispatcherOptions): void {
  const positive = { timeoutMs: options.timeoutMs, pollMs: options.pollMs, leaseMs: options.leaseMs };
  for (const [name, value] of Object.entries(positive)) {
    if (!Number.isFinite(value) || value <= 0) throw new RangeError(`webhook dispatcher: ${name} must be positive`);
  }
  const counts = {
    concurrency: options.concurrency,
    perWebhookConcurrency: options.perWebhookConcurrency,
    ...(options.busyConcurrency === undefined ? {} : { busyConcurrency: options.busyConcurrency }),
  };
  for (const [name, value] of Object.entries(counts)) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`webhook dispatcher: ${name} must be at least 1`);
  }
  // Else a slow attempt outlives its lease, and another dispatcher sends the same event meanwhile.
  if (options.leaseMs <= options.timeoutMs) {
    throw new RangeError('webhook dispatcher: leaseMs must be greater than timeoutMs');
  }
}

/** What a log line says of a delivery: ids only, never the secret, payload or signature. */
function describeClaim(claimed: ClaimedDelivery) {
  return {
    webhookId: claimed.webhookId,
    eventId: claimed.eventId,
    deliveryId: claimed.deliveryId.toString(),
    attempt: claimed.attemptNumber,
  };
}

/** Why a sleep ended: its time ran out, or a wake() (and the reason given to the first one). */
type WakeReason = 'timeout' | 'woken' | 'nudged';

/**
 * A sleep that wake() ends early; a wake() while awake makes the next sleep return at once.
 * 'nudged' outranks 'woken' when several wakes pile up.
 */
function createWakeup() {
  let pending: WakeReason | undefined;
  let interrupt: ((reason: WakeReason) => void) | undefined;
  return {
    wake(reason: 'woken' | 'nudged' = 'woken'): void {
      if (interrupt) interrupt(reason);
      else if (pending !== 'nudged') pending = reason;
    },
    sleep(ms: number): Promise<WakeReason> {
      if (pending !== undefined) {
        const reason = pending;
        pending = undefined;
        return Promise.resolve(reason);
      }
      return new Promise((resolve) => {
        const done = (reason: WakeReason) => {
          interrupt = undefined;
          clearTimeout(timer);
          resolve(reason);
        };
        // Unreferenced: a dispatcher never closed must not keep the process alive by itself.
        const timer = setTimeout(() => done('timeout'), ms).unref();
        interrupt = done;
      });
    },
  };
}

/** Warns about a recurring failure once, then at most every WARN_INTERVAL_MS; says when it ends. */
function createTroubleReporter(log: Logger, message: string) {
  let since: number | undefined;
  let lastWarned = 0;
  let suppressed = 0;
  return {
    report(error: unknown, fields: Record<string, unknown> = {}): void {
      const at = Date.now();
      since ??= at;
      if (at - lastWarned < WARN_INTERVAL_MS) {
        suppressed += 1;
        return;
      }
      log.warn({ ...fields, err: error, ...(suppressed > 0 ? { suppressed } : {}) }, message);
      lastWarned = at;
      suppressed = 0;
    },
    resolved(message: string): void {
      if (since === undefined) return;
      log.info({ afterMs: Date.now() - since }, message);
      since = undefined;
      lastWarned = 0;
      suppressed = 0;
    },
  };
}

function adjust(counts: Map<string, number>, key: string, change: 1 | -1): void {
  const value = (counts.get(key) ?? 0) + change;
  if (value > 0) counts.set(key, value);
  else counts.delete(key);
}

/** Waits for the promises (which never reject) to settle, or for `ms`, whichever comes first. */
async function settledWithin(promises: readonly Promise<unknown>[], ms: number): Promise<void> {
  if (promises.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  try {
    await Promise.race([Promise.allSettled(promises), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
