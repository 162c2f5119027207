import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger } from '../logger.js';
import type { RateLimitPolicy, RateLimitVerdict } from './rate-limit-policy.js';

export interface RedisStoreOptions {
  /** `redis://` or `rediss://`, as REDIS_URL gives it. */
  readonly url: string;
  /** Before every key: replicas of one service share it; another service (or test) uses another. */
  readonly keyPrefix: string;
}

export interface TokenRateLimiterOptions {
  /** Shared counters in Redis; absent: this process counts alone, in memory. */
  readonly redis?: RedisStoreOptions | undefined;
  readonly log: Logger;
}

export interface TokenRateLimiter {
  /** Counts one request of token `tokenId` under `policy` and says whether it is within it. */
  consume(tokenId: string, policy: RateLimitPolicy): Promise<RateLimitVerdict>;
  /** Whether the counts are shared with the other replicas now (Redis answers); false without Redis. */
  shared(): boolean;
  /** Resolves once Redis is ready, or after `timeoutMs` (then this process counts alone until it is). */
  ready(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/** A Redis that stops answering (frozen, partitioned) costs a request at most this long. */
const REDIS_COMMAND_TIMEOUT_MS = 250;
const REDIS_CONNECT_TIMEOUT_MS = 1_000;
/** Reconnect attempts back off up to this. */
const REDIS_MAX_RECONNECT_DELAY_MS = 2_000;

/**
 * Per-token rate limits with rate-limiter-flexible: fixed windows of `perSeconds`, counted under
 * the token's id (never the token). One limiter per distinct policy (the default and each
 * token's own), made on first use: their number is bounded by the tokens.
 *
 * With Redis, every replica counts in the same key (an atomic Lua INCR with expiry), so the
 * limit holds across replicas; a key over its limit is also remembered in this process until its
 * window ends, so a runaway client costs no Redis round trip. When Redis cannot answer (not
 * connected, or a command times out) the request is counted by the insurance limiter, in this
 * process's memory: the service fails open to per-process limits (with N replicas a token may
 * get up to N times its limit) rather than refusing every team because a counter store is down.
 * Without Redis, each process counts alone.
 */
export function createTokenRateLimiter({ redis: store, log }: TokenRateLimiterOptions): TokenRateLimiter {
  const client = store ? connectRedis(store.url, log) : undefined;
  const limiters = new Map<string, RateLimiterMemory | RateLimiterRedis>();
  const shared = () => client?.status === 'ready';

  function limiterFor({ requests, perSeconds }: RateLimitPolicy) {
    const name = `${requests}/${perSeconds}`;
    let limiter = limiters.get(name);
    if (limiter === undefined) {
      const common = { points: requests, duration: perSeconds, keyPrefix: `${store?.keyPrefix ?? ''}:rate:${name}` };
      limiter =
        client === undefined
          ? new RateLimiterMemory(common)
          : new RateLimiterRedis({
              ...common,
              storeClient: client,
              // Refused at once (to the insurance limiter) while not connected: never queued.
              rejectIfRedisNotReady: true,
              // Over the limit: refused from memory until the window ends, no Redis call.
              inMemoryBlockOnConsumed: requests + 1,
              insuranceLimiter: new RateLimiterMemory(common),
            });
      limiters.set(name, limiter);
    }
    return limiter;
  }

  return {
    async consume(tokenId, policy) {
      const limiter = limiterFor(policy);
      try {
        return verdictOf(policy, true, await limiter.consume(tokenId));
      } catch (refusal) {
        if (refusal instanceof RateLimiterRes) return verdictOf(policy, false, refusal);
        // Only without an insurance limiter (never here): an unexpected store failure.
        throw refusal;
      }
    },
    shared,
    async ready(timeoutMs) {
      if (client === undefined || shared()) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, timeoutMs);
        client.once('ready', done);
        function done() {
          clearTimeout(timer);
          client?.off('ready', done);
          resolve();
        }
      });
      if (!shared()) {
        log.warn({ timeoutMs }, 'rate limits: Redis is not ready; each process limits on its own until it is');
      }
    },
    async close() {
      if (client === undefined) return;
      // quit() waits for Redis to answer; a Redis that is away gets disconnect() at once.
      if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
      else client.disconnect();
    },
  };
}

function verdictOf(policy: RateLimitPolicy, allowed: boolean, result: RateLimiterRes): RateLimitVerdict {
  return {
    allowed,
    policy,
    remaining: Math.max(0, allowed ? result.remainingPoints : 0),
    resetSeconds: Math.max(allowed ? 0 : 1, Math.ceil(result.msBeforeNext / 1000)),
  };
}

/**
 * An ioredis client that never holds a request: no offline queue (a command fails at once while
 * disconnected), no retries of a command, a short command timeout; it reconnects on its own,
 * backing off to 2 s. Its state changes are logged once each, not every failed reconnect.
 */
function connectRedis(url: string, log: Logger): Redis {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    retryStrategy: (attempt) => Math.min(attempt * 100, REDIS_MAX_RECONNECT_DELAY_MS),
  });
  let connected: boolean | undefined;
  client.on('ready', () => {
    if (connected !== true) log.info('rate limits: Redis is ready; limits are shared by every replica');
    connected = true;
  });
  client.on('error', (error: unknown) => {
    if (connected === false) return;
    connected = false;
    log.warn({ err: error }, 'rate limits: Redis is unreachable; each process limits on its own until it is back');
  });
  client.on('close', () => {
    if (connected !== true) return;
    connected = false;
    log.warn('rate limits: the connection to Redis closed; each process limits on its own until it is back');
  });
  return client;
}
