import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testRedisUrl } from '../test-support/throwaway-redis.js';
import { FencedRateLimiterRedis } from './fenced-redis-limiter.js';
import { StaleCountError } from './redis-link.js';

describe.skipIf(testRedisUrl() === undefined)('FencedRateLimiterRedis (the shared test Redis)', () => {
  let client: Redis;
  const prefix = `test-${randomUUID()}`;

  beforeAll(async () => {
    client = new Redis(testRedisUrl() ?? '', { maxRetriesPerRequest: 0 });
    await client.ping();
  });
  afterAll(async () => {
    const keys = await client.keys(`${prefix}:*`);
    if (keys.length > 0) await client.del(...keys);
    client.disconnect();
  });

  /** A limiter of 2 per 60 s whose counts are due by `deadline` (ms on Redis's clock). */
  const limiter = (deadline: () => number) =>
    new FencedRateLimiterRedis({ storeClient: client, keyPrefix: prefix, points: 2, duration: 60, deadline });

  it('counts as rate-limiter-flexible does while the count arrives before its deadline', async () => {
    const inTime = limiter(() => Date.now() + 60_000);
    expect((await inTime.consume('a')).remainingPoints).toBe(1);
    expect((await inTime.consume('a')).remainingPoints).toBe(0);
    await expect(inTime.consume('a')).rejects.toMatchObject({ remainingPoints: 0, consumedPoints: 3 });
    expect(await client.get(`${prefix}:a`)).toBe('3');
    expect(await client.pttl(`${prefix}:a`)).toBeGreaterThan(50_000);
  });

  it('ignores a count that arrives after its deadline: nothing is written, and the caller is told', async () => {
    const late = limiter(() => Date.now() - 60_000);
    await expect(late.consume('b')).rejects.toBeInstanceOf(StaleCountError);
    expect(await client.exists(`${prefix}:b`)).toBe(0);
    // An existing count is left as it was too.
    await limiter(() => Date.now() + 60_000).consume('b');
    await expect(late.consume('b')).rejects.toBeInstanceOf(StaleCountError);
    expect(await client.get(`${prefix}:b`)).toBe('1');
  });
});
