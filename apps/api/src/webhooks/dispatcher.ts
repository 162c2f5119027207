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
 * webhook, none for a webhook that still has a delivery in flight here, and never more than
 * `perReceiverConcurrency` in flight to one receiver (the URL's origin, whatever the number of
 * subscriptions pointing at it): a receiver that hangs ties up its own slots until its attempts
 * time out, not everyone's. Idle, it polls every
 * `pollMs`; `nudge()` (a plant was created) and a finished delivery wake it at once.
 *
 * Before it claims, a nudged or polling loop fans out the events not fanned out yet (any
 * replica's: one delivery per subscription, written by the store, `fanOutBatch` deliveries a
 * statement at most): the create writes only its event, and the cost of many subscriptions is
 * paid here, off the request's path.
 */

export type DeliveryStore = Pick<Database, 'fanOutEvents' | 'claimDeliveries' | 'recordAttempt' | 'releaseClaim'>;

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
}

export interface WebhookDispatcher {
  /** Starts the loop (once; after close(), never). */
  start(): void;
  /** Look for due deliveries now, not at the next poll. */
  nudge(): void;
  /**
   * Stops claiming, lets deliveries in flight finish for up to `drainMs`, then aborts the rest
   * and hands their claims back (so another replica may send them at once). Never rejects.
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
  const inFlightByWebhook = new Map<string, number>();
  const inFlightByReceiver = new Map<string, number>();
  const perReceiverConcurrency = options.perReceiverConcurrency ?? perWebhookConcurrency;
  const fanOutBatch = options.fanOutBatch ?? DEFAULT_FAN_OUT_BATCH;
  const claimTrouble = createTroubleReporter(log, 'webhook dispatch cannot claim deliveries; retrying');
  const fanOutTrouble = createTroubleReporter(log, 'webhook dispatch cannot fan out events; retrying');
  // Events may be waiting from before this process started (or from replicas that do not dispatch).
  let fanOutDue = true;
  const recordTrouble = createTroubleReporter(
    log,
    'webhook attempt could not be recorded; the delivery is retried when its lease expires',
  );
  let loop: Promise<void> | undefined;
  let stopping = false;
  let closing: Promise<void> | undefined;

  async function run(): Promise<void> {
    while (!stopping) {
      if (fanOutDue) {
        fanOutDue = false;
        // Some were waiting: more may be (they are fanned out before the next claim).
        if ((await fanOut()) > 0) fanOutDue = true;
        if (stopping) return;
      }
      const free = concurrency - inFlight.size;
      if (free > 0) {
        const claims = await claim(free);
        if (stopping) {
          await Promise.all((claims ?? []).map(release));
          return;
        }
        if (claims !== null) {
          for (const claimed of claims) startDelivery(claimed);
          // A full claim: more may be due. Otherwise wait (the next one is due, nudged or polled).
          if (claims.length >= free) continue;
        }
      }
      if (fanOutDue) continue;
      // A poll looks for other replicas' events too; a finished delivery's wake-up only claims.
      if ((await wakeup.sleep(pollMs)) !== 'woken') fanOutDue = true;
    }
  }

  /** Events fanned out by one statement; 0 when the store failed (reported; the next poll retries). */
  async function fanOut(): Promise<number> {
    try {
      const { events } = await store.fanOutEvents({ maxDeliveries: fanOutBatch });
      fanOutTrouble.resolved('webhook dispatch fans out events again');
      return events;
    } catch (error) {
      fanOutTrouble.report(error);
      return 0;
    }
  }

  /** The claims, or null when the store failed (reported, then retried after `pollMs`). */
  async function claim(limit: number): Promise<ClaimedDelivery[] | null> {
    try {
      const claims = await store.claimDeliveries({
        limit,
        perWebhookLimit: perWebhookConcurrency,
        perReceiverLimit: perReceiverConcurrency,
        busyReceivers: inFlightByReceiver,
        leaseMs,
        excludeWebhookIds: [...inFlightByWebhook.keys()],
      });
      claimTrouble.resolved('webhook dispatch claims deliveries again');
      return claims;
    } catch (error) {
      claimTrouble.report(error);
      return null;
    }
  }

  function startDelivery(claimed: ClaimedDelivery): void {
    const { webhookId } = claimed;
    const receiver = receiverOrigin(claimed.url);
    inFlightByWebhook.set(webhookId, (inFlightByWebhook.get(webhookId) ?? 0) + 1);
    inFlightByReceiver.set(receiver, (inFlightByReceiver.get(receiver) ?? 0) + 1);
    const task = deliver(claimed)
      .catch((error: unknown) => log.error({ err: error, ...describeClaim(claimed) }, 'webhook delivery crashed'))
      .finally(() => {
        inFlight.delete(task);
        const left = (inFlightByWebhook.get(webhookId) ?? 1) - 1;
        if (left > 0) inFlightByWebhook.set(webhookId, left);
        else inFlightByWebhook.delete(webhookId);
        const leftThere = (inFlightByReceiver.get(receiver) ?? 1) - 1;
        if (leftThere > 0) inFlightByReceiver.set(receiver, leftThere);
        else inFlightByReceiver.delete(receiver);
        wakeup.wake();
      });
    inFlight.add(task);
  }

  async function deliver(claimed: ClaimedDelivery): Promise<void> {
    const attemptedAt = now();
    const result = await attempt(claimed, attemptedAt);
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
      headers = signWebhook(claimed.secret, claimed.eventId, claimed.payload, at);
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
  const counts = { concurrency: options.concurrency, perWebhookConcurrency: options.perWebhookConcurrency };
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
