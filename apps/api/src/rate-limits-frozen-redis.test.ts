import { randomUUID } from 'node:crypto';
import { createTestStorage, type TestStorage, testToken } from '@plant-store/db/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { failOnContractViolations } from './test-support/checked-fetch.js';
import { request, startTestService, type TestService } from './test-support/test-service.js';
import { startThrowawayRedis, type ThrowawayRedis, testRedisUrl } from './test-support/throwaway-redis.js';

failOnContractViolations();

/** Sends `count` GET /plants with `token`, one after another; their statuses. */
async function statuses(url: string, token: string, count: number): Promise<number[]> {
  const answers: number[] = [];
  for (let index = 0; index < count; index++) answers.push((await request(url, '/plants', { token })).status);
  return answers;
}

/** `rate_limits_shared` as the service reports it. */
async function sharedGauge(service: TestService): Promise<number | undefined> {
  const line = (await request(service.url, '/metrics')).text
    .split('\n')
    .find((candidate) => candidate.startsWith('rate_limits_shared '));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** How many scripts Redis has run (the counts: EVALSHA, or EVAL the first time), from INFO commandstats. */
async function scriptCalls(inspector: Redis): Promise<number> {
  const stats = await inspector.info('commandstats');
  let calls = 0;
  for (const match of stats.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)) calls += Number(match[1]);
  return calls;
}

// A Redis the test starts itself and freezes (SIGSTOP: the connection stays open, nothing answers),
// as a hung host or a paused VM does; the shared Redis is never touched.
describe.skipIf(testRedisUrl() === undefined)('rate limits with Redis frozen (SIGSTOP), then thawed', () => {
  let redis: ThrowawayRedis;
  let storage: TestStorage;
  let service: TestService;
  let inspector: Redis;
  const prefix = `test-${randomUUID()}`;

  beforeAll(async () => {
    redis = await startThrowawayRedis();
    storage = await createTestStorage('pglite', { migrated: true });
    service = await startTestService(storage, {
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: prefix,
      TOKEN_RATE_LIMIT: 'off',
    });
    inspector = new Redis(redis.url, { maxRetriesPerRequest: 0 });
  });
  afterAll(async () => {
    inspector?.disconnect();
    redis?.thaw();
    await service?.close();
    await storage?.dispose();
    await redis?.dispose();
  });

  const issue = async (name: string) => {
    const { token, record } = await service.db.issueToken(
      testToken({
        name,
        scopes: ['plants:read'],
        rateLimit: { requests: 3, perSeconds: 60 },
      }),
    );
    return { token, key: `${prefix}:rate:3/60:${record.id}` };
  };

  it('stops counting in Redis at the first timeout (gauge 0, logged), drops the counts it sent too late, and resumes where Redis left off', {
    timeout: 60_000,
  }, async () => {
    const idle = await issue('idle-during-freeze');
    const busy = await issue('busy-during-freeze');
    // Before: counted in Redis. The idle token uses 2 of its 3 in this window, then sends nothing.
    expect(await statuses(service.url, idle.token, 2)).toEqual([200, 200]);
    expect(await inspector.get(idle.key)).toBe('2');
    expect(await sharedGauge(service)).toBe(1);
    const scriptsBefore = await scriptCalls(inspector);

    redis.freeze();
    // The first count waits for the command timeout and is counted in memory; from then on no
    // count is sent to Redis (nothing would answer it): every one is counted in memory, at once.
    expect(await statuses(service.url, busy.token, 30)).toEqual([200, 200, 200, ...Array(27).fill(429)]);
    expect(await sharedGauge(service)).toBe(0);
    expect(service.logs.join('')).toContain(
      'rate limits: Redis is connected but did not answer in time; each process limits on its own until it answers again',
    );

    redis.thaw();
    await vi.waitFor(async () => expect(await sharedGauge(service)).toBe(1), { timeout: 10_000, interval: 100 });
    expect(service.logs.join('')).toContain('rate limits: Redis answers again; limits are shared by every replica');
    // Redis received one count during the freeze (the one that timed out), and ran it only after
    // its deadline: the fence dropped it. None of the freeze's 30 requests is in Redis.
    expect((await scriptCalls(inspector)) - scriptsBefore).toBe(1);
    expect(await inspector.get(busy.key)).toBeNull();

    // After it, the rule: counts are Redis's again, from what Redis held. The token that was busy
    // during the freeze is not refused for it (the freeze's requests were counted in memory, once)...
    expect(await statuses(service.url, busy.token, 4)).toEqual([200, 200, 200, 429]);
    expect(await inspector.get(busy.key)).toBe('4');
    // ... and the idle one goes on in its window: 1 left of the 3.
    expect(await statuses(service.url, idle.token, 2)).toEqual([200, 429]);
    expect(await inspector.get(idle.key)).toBe('4');
  });
});
