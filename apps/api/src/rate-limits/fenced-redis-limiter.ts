import type { Redis, Result } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { StaleCountError } from './redis-link.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** FENCED_INCR_SCRIPT: `[consumed, ms left]`, or `[-1, 0]` when it came after `deadline`. */
    rateLimitFencedIncr(
      key: string,
      points: string,
      seconds: string,
      deadline: string,
    ): Result<[number, number], Context>;
  }
}

/**
 * rate-limiter-flexible's increment (a fixed window: the key's expiry is set by its first count),
 * behind a fence: a count that Redis runs after `ARGV[3]` (ms on Redis's clock) changes nothing.
 * A frozen Redis keeps every count sent to it, and applies them all when it wakes; by then the
 * process has given up on each (after its command timeout) and counted the request in its own
 * memory. Without the fence they would land in Redis as well, in a window that starts at the
 * wake-up, and refuse a token that has sent nothing since.
 */
const FENCED_INCR_SCRIPT = `
local now = redis.call('TIME')
if tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) > tonumber(ARGV[3]) then
  return {-1, 0}
end
redis.call('set', KEYS[1], 0, 'EX', ARGV[2], 'NX')
local consumed = redis.call('incrby', KEYS[1], ARGV[1])
local ttl = redis.call('pttl', KEYS[1])
if ttl == -1 then
  redis.call('expire', KEYS[1], ARGV[2])
  ttl = 1000 * ARGV[2]
end
return {consumed, ttl}
`;

export type FencedRateLimiterRedisOptions = ConstructorParameters<typeof RateLimiterRedis>[0] & {
  readonly storeClient: Redis;
  /** The deadline (ms on Redis's clock) of a count sent now. */
  readonly deadline: () => number;
};

/**
 * RateLimiterRedis with the fenced increment. Only its store call changes (`_upsert`, which the
 * library's consume calls with the key, the points and the window's length, and which resolves
 * with `[consumed, ms left]` for it to judge); its in-memory block of keys over their limit and
 * its result handling stay the library's. Only `consume` is used: the library's other calls
 * (`penalty`, `reward`, `block`, `get`, `set`, `delete`) are not fenced.
 */
export class FencedRateLimiterRedis extends RateLimiterRedis {
  private readonly redis: Redis;
  private readonly deadline: () => number;

  constructor(options: FencedRateLimiterRedisOptions) {
    super(options);
    this.redis = options.storeClient;
    this.deadline = options.deadline;
    this.redis.defineCommand('rateLimitFencedIncr', { numberOfKeys: 1, lua: FENCED_INCR_SCRIPT });
  }

  /** Overrides the library's store call (see the class comment). */
  async _upsert(key: string, points: number, msDuration: number): Promise<[number, number]> {
    if (this.redis.status !== 'ready') throw new Error('Redis connection is not ready');
    const result = await this.redis.rateLimitFencedIncr(
      key,
      String(points),
      String(Math.floor(msDuration / 1000)),
      String(Math.ceil(this.deadline())),
    );
    if (result[0] === -1) throw new StaleCountError();
    return result;
  }
}
