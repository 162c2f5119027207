import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger } from '../logger.js';
import { FencedRateLimiterRedis } from './fenced-redis-limiter.js';
import type { RateLimitPolicy, RateLimitVerdict } from './rate-limit-policy.js';
import { connectRedisLink } from './redis-link.js';

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
  /** Whether the counts are shared with the other replicas now (Redis answers in time); false without Redis. */
  shared(): boolean;
  /** Resolves once Redis is ready, or after `timeoutMs` (then this process counts alone until it is). */
  ready(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Per-token rate limits with rate-limiter-flexible: fixed windows of `perSeconds`, counted under
 * the token's id (never the token). One limiter per distinct policy (the default and each
 * token's own), made on first use: their number is bounded by the tokens.
 *
 * With Redis, every replica counts in the same key (an atomic Lua INCR with expiry), so the
 * limit holds across replicas; a key over its limit is also remembered in this process until its
 * window ends, so a runaway client costs no Redis round trip. When Redis cannot count a request
 * (not connected, or no answer within the command timeout) the request is counted in this
 * process's memory: the service fails open to per-process limits (with N replicas a token may
 * get up to N times its limit) rather than refusing every team because a counter store is down.
 * After a timeout no count is sent until Redis answers again (see RedisLink), and a count that
 * reaches Redis after its deadline is ignored (see FencedRateLimiterRedis): a request is counted
 * in one place, never in Redis later. Without Redis, each process counts alone.
 */
export function createTokenRateLimiter({ redis: store, log }: TokenRateLimiterOptions): TokenRateLimiter {
  const link = store ? connectRedisLink(store.url, log) : undefined;
  const limiters = new Map<string, { memory: RateLimiterMemory; redis?: FencedRateLimiterRedis }>();

  function limitersFor({ requests, perSeconds }: RateLimitPolicy) {
    const name = `${requests}/${perSeconds}`;
    let found = limiters.get(name);
    if (found === undefined) {
      const common = { points: requests, duration: perSeconds, keyPrefix: `${store?.keyPrefix ?? ''}:rate:${name}` };
      const memory = new RateLimiterMemory(common);
      found =
        link === undefined
          ? { memory }
          : {
              memory,
              redis: new FencedRateLimiterRedis({
                ...common,
                storeClient: link.client,
                deadline: link.deadline,
                // Over the limit: refused from memory until the window ends, no Redis call.
                inMemoryBlockOnConsumed: requests + 1,
              }),
            };
      limiters.set(name, found);
    }
    return found;
  }

  /** Counts in Redis when it answers, else in this process's memory. */
  async function count(tokenId: string, policy: RateLimitPolicy): Promise<RateLimiterRes> {
    const { memory, redis } = limitersFor(policy);
    if (redis === undefined || link === undefined || !link.shared()) return memory.consume(tokenId);
    try {
      return await redis.consume(tokenId);
    } catch (failure) {
      if (failure instanceof RateLimiterRes) throw failure;
      link.countFailed(failure);
      return memory.consume(tokenId);
    }
  }

  return {
    async consume(tokenId, policy) {
      try {
        return verdictOf(policy, true, await count(tokenId, policy));
      } catch (refusal) {
        if (refusal instanceof RateLimiterRes) return verdictOf(policy, false, refusal);
        throw refusal;
      }
    },
    shared: () => link?.shared() ?? false,
    ready: async (timeoutMs) => link?.ready(timeoutMs),
    close: async () => link?.close(),
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
