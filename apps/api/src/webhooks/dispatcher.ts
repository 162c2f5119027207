import { type ClaimedDelivery, type Database, receiverOrigin } from '@plant-store/db';
import { createLogger, type Logger } from '../logger.js';
import type { DeliveryTracing } from '../tracing/tracing.js';
import { createCaps } from './dispatch/caps.js';
import { type ClaimBatch, createClaimer } from './dispatch/claimer.js';
import { createDeliverySlots } from './dispatch/delivery-slots.js';
import { describeClaim } from './dispatch/describe-claim.js';
import { createFanOutPacer } from './dispatch/fan-out-pacer.js';
import { type AttemptResult, createOutcomeRecorder } from './dispatch/record-outcome.js';
import { createAttemptSender } from './dispatch/send-attempt.js';
import { createTrackedWork, settledWithin } from './dispatch/tracked-work.js';
import { createWakeup } from './dispatch/wakeup.js';
import type { ResolveHost } from './url-policy.js';

export type { AttemptResult } from './dispatch/record-outcome.js';

/**
 * Sends the webhook deliveries the database holds: at least once, each within its own deadline,
 * none able to hold up another.
 *
 * One loop per process (every replica runs one) goes round in steps, each a part of its own in
 * `dispatch/`:
 * 1. fan out the events not fanned out yet, one delivery per subscription, only as fast as it
 *    delivers, receiver by receiver (fan-out-pacer): the create writes only its event;
 * 2. claim due deliveries, a lease in the database so that no replica sends what another holds
 *    (claimer), as many as the slots will take next (caps);
 * 3. queue them for the slots (delivery-slots): `concurrency` in flight here, at most
 *    `perWebhookConcurrency` per webhook and `perReceiverConcurrency` per receiver (the URL's
 *    origin): a receiver that hangs ties up its own slots until its attempts time out, not everyone's;
 * 4. sleep `pollMs` (wakeup); `nudge()` (a plant was created) and a finished delivery wake it at once.
 *
 * Each delivery that gets a slot then goes through its own steps (deliver): make the HTTP call
 * (send-attempt: sign, POST, span), free the slot, record how it went (record-outcome: delivered,
 * or retried on the schedule, or failed), or hand the claim back when close() cut it short.
 *
 * While the process is busy serving requests (`busy()`, asked before every claim and every start),
 * deliveries give way (caps): at most `busyConcurrency` in flight, one per receiver (and per
 * webhook), and creates no longer wake it (it fans out on its poll, and claims as deliveries
 * finish); the fan-out writes only what those deliveries take next. Requests keep the CPU;
 * deliveries go on, fewer at a time (a hanging receiver still holds back only itself), and catch
 * up at full speed once the requests stop.
 */

export type DeliveryStore = Pick<
  Database,
  'fanOutEvents' | 'webhookReceivers' | 'claimDeliveries' | 'recordAttempt' | 'releaseClaim'
>;

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
  /**
   * Deliveries of one team's subscriptions in flight at once, all its receivers together: the rest
   * of the slots stay for the other teams. Default half of `concurrency` (rounded up); while busy,
   * the same share of `busyConcurrency`.
   */
  readonly perTeamConcurrency?: number;
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

export function createWebhookDispatcher(options: WebhookDispatcherOptions): WebhookDispatcher {
  checkOptions(options);
  const { store, timeoutMs, pollMs, leaseMs } = options;
  const log = options.log ?? createLogger({ level: 'silent' });
  const now = options.now ?? (() => new Date());
  const shutdown = new AbortController();
  const wakeup = createWakeup();
  // The loop is woken once a task is gone, with its recording done.
  const work = createTrackedWork(() => wakeup.wake());
  const caps = createCaps(options);
  const pacer = createFanOutPacer({ store, pollMs, log });
  const claimer = createClaimer({ store, leaseMs, timeoutMs, log });
  const sender = createAttemptSender({
    allowPrivateNetworks: options.allowPrivateNetworks,
    timeoutMs,
    maxResponseBytes: options.maxResponseBytes,
    resolve: options.resolve,
    tracing: options.tracing,
    signal: shutdown.signal,
    log,
  });
  const recordOutcome = createOutcomeRecorder({
    store,
    retryScheduleMs: options.retryScheduleMs,
    random: options.random ?? Math.random,
    now,
    log,
    observeAttempt: options.observeAttempt ?? (() => {}),
  });
  const slots = createDeliverySlots({
    caps: caps.now,
    stopping: () => stopping,
    start: (claimed, freeSlot) =>
      work.track(
        deliver(claimed, freeSlot)
          .catch((error: unknown) => log.error({ err: error, ...describeClaim(claimed) }, 'webhook delivery crashed'))
          .finally(freeSlot),
      ),
    expire: (claimed) => work.track(claimer.release(claimed)),
    slotFreed: () => {
      claimer.deliveryFinished();
      wakeup.wake();
    },
  });
  let loop: Promise<void> | undefined;
  let stopping = false;
  let closing: Promise<void> | undefined;

  async function run(): Promise<void> {
    while (!stopping) {
      await pacer.prepare();
      const fanOutCaps = caps.now();
      if (pacer.mayFanOut(fanOutCaps)) {
        await pacer.fanOut(fanOutCaps);
        if (stopping) return;
      }
      // Recordings behind (the database is slow) hold back new claims too, past a bound.
      const claimCaps = caps.now();
      const room = slots.room(claimCaps, work.size);
      if (room > 0 && claimer.due(claimCaps)) {
        const batch = await claimer.claim(room, claimCaps, slots.held);
        if (stopping) {
          await Promise.all((batch?.claims ?? []).map(claimer.release));
          await releaseWaiting();
          return;
        }
        if (batch !== null) {
          queue(batch);
          // A full claim: more may be due. Otherwise wait (the next one is due, nudged or polled).
          if (batch.claims.length >= room) {
            claimer.claimAnyway();
            continue;
          }
        }
      }
      if (pacer.mayFanOut(caps.now())) continue;
      // A poll looks for other replicas' events too; a finished delivery's wake-up only claims,
      // and only once `claimAfter` have finished since the last claim.
      if ((await wakeup.sleep(pollMs)) !== 'woken') {
        pacer.markDue();
        claimer.claimAnyway();
      }
    }
  }

  /** Claims taken: counted off what the fan-out has waiting, then queued for the slots. */
  function queue({ claims, fullAtClaim, startBy }: ClaimBatch): void {
    if (claims.length === 0) pacer.nothingClaimed(fullAtClaim);
    for (const claimed of claims) {
      const receiver = receiverOrigin(claimed.url);
      if (claimed.attemptNumber === 1) pacer.firstAttemptClaimed(receiver);
      slots.enqueue(claimed, receiver, startBy);
    }
    slots.pump();
  }

  /** One delivery in its slot: the HTTP call, then the slot freed, then the outcome recorded. */
  async function deliver(claimed: ClaimedDelivery, freeSlot: () => void): Promise<void> {
    const attemptedAt = now();
    const result = await sender.send(claimed, attemptedAt);
    // The recording goes on without the slot (the lease keeps the delivery from any claim meanwhile).
    freeSlot();
    if (shutdown.signal.aborted && result.statusCode === null) {
      // Cut short by close(): not the receiver's fault, so no attempt is recorded.
      await claimer.release(claimed);
      return;
    }
    await recordOutcome(claimed, attemptedAt, result);
  }

  /** Hands back what is claimed and not started (shutdown). */
  async function releaseWaiting(): Promise<void> {
    await Promise.all(slots.takeWaiting().map(claimer.release));
  }

  async function drainAndStop(): Promise<void> {
    const drainMs = options.drainMs ?? timeoutMs;
    const deadline = Date.now() + drainMs;
    wakeup.wake();
    await settledWithin(loop ? [loop] : [], drainMs);
    // Claimed and not started: handed back at once, for another replica to send.
    await releaseWaiting();
    await settledWithin(work.pending(), Math.max(0, deadline - Date.now()));
    shutdown.abort();
    // Aborted attempts end at once and release their claims; the loop, if still in a claim, ends
    // when the claim does (and releases what it got).
    await settledWithin([...(loop ? [loop] : []), ...work.pending()], Math.max(drainMs, 1000));
    await sender.close();
  }

  return {
    start() {
      if (loop !== undefined || stopping) return;
      loop = run().catch((error: unknown) => log.error({ err: error }, 'webhook dispatch loop crashed'));
    },
    nudge() {
      // Busy: the poll and the deliveries finishing pick the events up; a wake-up per create
      // would fan out and claim on every one of them.
      if (caps.now().busy) return;
      pacer.markDue();
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
    ...(options.perTeamConcurrency === undefined ? {} : { perTeamConcurrency: options.perTeamConcurrency }),
  };
  for (const [name, value] of Object.entries(counts)) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`webhook dispatcher: ${name} must be at least 1`);
  }
  // Else a slow attempt outlives its lease, and another dispatcher sends the same event meanwhile.
  if (options.leaseMs <= options.timeoutMs) {
    throw new RangeError('webhook dispatcher: leaseMs must be greater than timeoutMs');
  }
}
