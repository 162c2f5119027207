import { Redis } from 'ioredis';
import type { Logger } from '../logger.js';

/** A Redis that stops answering (frozen, partitioned) costs a request at most this long. */
export const REDIS_COMMAND_TIMEOUT_MS = 250;
const REDIS_CONNECT_TIMEOUT_MS = 1_000;
/** Reconnect attempts back off up to this. */
const REDIS_MAX_RECONNECT_DELAY_MS = 2_000;
/** While Redis is connected but not answering, it is asked this often whether it answers again. */
const PROBE_INTERVAL_MS = 500;

/**
 * The rate limiter's connection to Redis, and whether counting there is possible now:
 * - `starting`, then `connecting`: not connected yet, or not since the connection closed (ioredis
 *   reconnects);
 * - `shared`: connected, answering, and its clock known (see `deadline`);
 * - `not-answering`: connected, but a command found no answer in time (a frozen or overloaded
 *   Redis keeps the connection open and says nothing). No count is sent until a probe (`TIME`,
 *   every 500 ms) is answered in time: a frozen Redis would otherwise pile up a count per request
 *   and apply them all when it wakes.
 * Every change of state is logged once.
 */
export interface RedisLink {
  readonly client: Redis;
  /** Whether counts go to Redis now (`rate_limits_shared`). */
  shared(): boolean;
  /**
   * The time, on Redis's clock (ms since the epoch), after which a count sent now is stale: this
   * process has stopped waiting for it and counted the request in its own memory.
   */
  deadline(): number;
  /** A count failed: if Redis did not answer in time (or answered too late), stop sending counts until it does. */
  countFailed(error: unknown): void;
  /** Resolves once counting is shared, or after `timeoutMs` (then this process counts alone until it is). */
  ready(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/** Thrown for a count that reached Redis after its deadline: Redis ignored it. */
export class StaleCountError extends Error {
  override readonly name = 'StaleCountError';
  constructor() {
    super('Redis received the count after its deadline and ignored it');
  }
}

type State = 'starting' | 'connecting' | 'shared' | 'not-answering';

/**
 * An ioredis client that never holds a request: no offline queue (a command fails at once while
 * disconnected), no retries of a command, a short command timeout; it reconnects on its own,
 * backing off to 2 s.
 */
export function connectRedisLink(url: string, log: Logger): RedisLink {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    retryStrategy: (attempt) => Math.min(attempt * 100, REDIS_MAX_RECONNECT_DELAY_MS),
  });
  let state: State = 'starting';
  /** Redis's clock minus this process's, in ms, measured with TIME to within `clockUncertaintyMs`. */
  let clockOffsetMs = 0;
  /** Half the round trip of that measurement. */
  let clockUncertaintyMs = 0;
  let probing: NodeJS.Timeout | undefined;
  let measuring = false;
  const waiters = new Set<() => void>();

  function enter(next: State, fields: Record<string, unknown> = {}, err?: unknown): void {
    if (next === state) return;
    const previous = state;
    state = next;
    if (next === 'shared') {
      stopProbing();
      log.info(
        fields,
        previous === 'not-answering'
          ? 'rate limits: Redis answers again; limits are shared by every replica'
          : 'rate limits: Redis is ready; limits are shared by every replica',
      );
      for (const wake of waiters) wake();
      return;
    }
    if (next === 'not-answering') {
      log.warn(
        { timeoutMs: REDIS_COMMAND_TIMEOUT_MS, ...fields },
        'rate limits: Redis is connected but did not answer in time; each process limits on its own until it answers again',
      );
      startProbing();
      return;
    }
    stopProbing();
    if (err === undefined) {
      log.warn('rate limits: the connection to Redis closed; each process limits on its own until it is back');
    } else {
      log.warn({ err }, 'rate limits: Redis is unreachable; each process limits on its own until it is back');
    }
  }

  /** Asks Redis the time: sets the clock offset and shares the counting when it answers in time. */
  async function measureClock(): Promise<void> {
    if (measuring) return;
    measuring = true;
    try {
      const sent = Date.now();
      const [seconds, microseconds] = await client.time();
      const received = Date.now();
      clockOffsetMs = Number(seconds) * 1000 + Number(microseconds) / 1000 - (sent + received) / 2;
      clockUncertaintyMs = (received - sent) / 2;
      if (client.status === 'ready') enter('shared');
    } catch {
      if (client.status === 'ready') enter('not-answering');
    } finally {
      measuring = false;
    }
  }

  function startProbing(): void {
    probing ??= setInterval(() => void measureClock(), PROBE_INTERVAL_MS);
    probing.unref();
  }

  function stopProbing(): void {
    clearInterval(probing);
    probing = undefined;
  }

  client.on('ready', () => void measureClock());
  // Once per loss, not every failed reconnect: with the cause when there is one.
  client.on('error', (error: unknown) => {
    if (client.status !== 'ready' && state !== 'connecting') enter('connecting', {}, error);
  });
  client.on('close', () => {
    if (state === 'shared' || state === 'not-answering') enter('connecting');
  });

  const shared = () => state === 'shared';
  return {
    client,
    shared,
    // Never before this process gives up on it: a count Redis ignores was counted here.
    deadline: () => Date.now() + clockOffsetMs + clockUncertaintyMs + REDIS_COMMAND_TIMEOUT_MS,
    countFailed(error) {
      const late =
        error instanceof StaleCountError || (error instanceof Error && error.message === 'Command timed out');
      if (late && state === 'shared') enter('not-answering', { reason: error.message });
    },
    async ready(timeoutMs) {
      if (shared()) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, timeoutMs);
        waiters.add(done);
        function done() {
          clearTimeout(timer);
          waiters.delete(done);
          resolve();
        }
      });
      if (!shared()) {
        log.warn({ timeoutMs }, 'rate limits: Redis is not ready; each process limits on its own until it is');
      }
    },
    async close() {
      stopProbing();
      // quit() waits for Redis to answer; a Redis that is away (or not answering) gets disconnect() at once.
      if (shared()) await client.quit().catch(() => client.disconnect());
      else client.disconnect();
    },
  };
}
