import { randomUUID } from 'node:crypto';
import { openDatabase } from '@plant-store/db';
import { createTestStorage, type TestStorage, testEngines, testToken } from '@plant-store/db/testing';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { failOnContractViolations } from './test-support/checked-fetch.js';
import { expectError } from './test-support/expect-error.js';
import { freePort } from './test-support/free-port.js';
import { startServiceProcess } from './test-support/service-process.js';
import { request, startTestService, type TestResponse, type TestService } from './test-support/test-service.js';
import { startThrowawayRedis, type ThrowawayRedis, testRedisUrl } from './test-support/throwaway-redis.js';

failOnContractViolations();

const OVER_LIMIT = /^too many requests: this token may send \d+ requests per \d+ s; retry after \d+ s$/;

/** A Prometheus sample's value: `name{labels} value`, labels written as the exposition writes them. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}${labels} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** Sends `count` GET /plants with `token`, one after another; their statuses. */
async function statuses(url: string, token: string, count: number): Promise<number[]> {
  const answers: number[] = [];
  for (let index = 0; index < count; index++) answers.push((await request(url, '/plants', { token })).status);
  return answers;
}

function expectOverLimit(response: TestResponse, policy: string): void {
  expectError(response, 429, OVER_LIMIT);
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(response.headers.get('ratelimit-policy')).toBe(policy);
  expect(response.headers.get('ratelimit')).toBe(`"token";r=0;t=${retryAfter}`);
}

describe.each(testEngines())('per-token rate limits, in one process, on %s', (engine) => {
  let storage: TestStorage;
  let service: TestService;

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    service = await startTestService(storage, { TOKEN_RATE_LIMIT: '4/60' });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  afterAll(async () => {
    await service?.close();
    await storage?.dispose();
  });

  const issue = async (name: string, rateLimit?: { requests: number; perSeconds: number }) =>
    (
      await service.db.issueToken(
        testToken({
          name,
          scopes: ['plants:read', 'plants:write'],
          ...(rateLimit ? { rateLimit } : {}),
        }),
      )
    ).token;

  it('lets a token send the default limit per window, then answers 429 with Retry-After and the RateLimit fields', async () => {
    const token = await issue('default-limited');
    const other = await issue('bystander');
    const first = await request(service.url, '/plants', { token });
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-policy')).toBe('"token";q=4;w=60');
    expect(first.headers.get('ratelimit')).toMatch(/^"token";r=3;t=(59|60)$/);
    expect(await statuses(service.url, token, 4)).toEqual([200, 200, 200, 429]);
    expectOverLimit(await request(service.url, '/plants', { token }), '"token";q=4;w=60');
    // Before the body is read: a POST over the limit is a 429 too, whatever it carries.
    expect((await request(service.url, '/plants', { token, body: '{not json' })).status).toBe(429);
    // Another token has a budget of its own.
    expect((await request(service.url, '/plants', { token: other })).status).toBe(200);
  });

  it("applies a token's own limit instead of the default", async () => {
    const strict = await issue('strict', { requests: 2, perSeconds: 30 });
    const generous = await issue('generous', { requests: 10, perSeconds: 60 });
    expect(await statuses(service.url, strict, 3)).toEqual([200, 200, 429]);
    expectOverLimit(await request(service.url, '/plants', { token: strict }), '"token";q=2;w=30');
    expect(await statuses(service.url, generous, 10)).toEqual(Array(10).fill(200));
    expect((await request(service.url, '/plants', { token: generous })).status).toBe(429);
  });

  it('gives the budget back when the window ends', async () => {
    const token = await issue('windowed', { requests: 1, perSeconds: 60 });
    expect(await statuses(service.url, token, 2)).toEqual([200, 429]);
    // The in-memory counters read the wall clock: a minute later is a new window.
    vi.useFakeTimers({ now: Date.now() + 61_000, toFake: ['Date'] });
    expect(await statuses(service.url, token, 2)).toEqual([200, 429]);
  });

  it('names the limited token in its access lines and in token_requests_total, never the token', async () => {
    const token = await issue('noisy-team', { requests: 1, perSeconds: 60 });
    expect(await statuses(service.url, token, 3)).toEqual([200, 429, 429]);
    const lines = service.logs.map((line) => JSON.parse(line) as Record<string, unknown>);
    const limited = lines.filter((line) => line.message === 'request' && line.status === 429);
    expect(limited.filter((line) => line.tokenName === 'noisy-team')).toHaveLength(2);
    const metrics = (await request(service.url, '/metrics')).text;
    expect(sample(metrics, 'token_requests_total', '{token="noisy-team",status="429"}')).toBe(2);
    expect(sample(metrics, 'token_requests_total', '{token="noisy-team",status="200"}')).toBe(1);
    expect(service.logs.join('')).not.toContain(token);
    expect(metrics).not.toContain(token);
  });
});

describe('TOKEN_RATE_LIMIT=off', () => {
  it('limits only the tokens that have a limit of their own', async () => {
    const storage = await createTestStorage('pglite', { migrated: true });
    const service = await startTestService(storage, { TOKEN_RATE_LIMIT: 'off' });
    try {
      const free = (await service.db.issueToken(testToken({ name: 'free', scopes: ['plants:read'] }))).token;
      const limited = (
        await service.db.issueToken(
          testToken({
            name: 'limited',
            scopes: ['plants:read'],
            rateLimit: { requests: 1, perSeconds: 60 },
          }),
        )
      ).token;
      const unlimited = await request(service.url, '/plants', { token: free });
      expect(unlimited.headers.get('ratelimit')).toBeNull();
      expect(await statuses(service.url, free, 20)).toEqual(Array(20).fill(200));
      expect(await statuses(service.url, limited, 2)).toEqual([200, 429]);
    } finally {
      await service.close();
      await storage.dispose();
    }
  });
});

// Two real service processes on one PostgreSQL database, requests alternated between them.
describe.skipIf(!testEngines().includes('postgres') || testRedisUrl() === undefined)(
  'two replicas on one database (PostgreSQL, Redis)',
  () => {
    // Registered as soon as each is made: they run even when the test times out.
    const cleanups: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
    });

    it('share a token’s limit through Redis; without Redis each process limits alone', {
      timeout: 120_000,
    }, async () => {
      const storage = await createTestStorage('postgres', { migrated: true });
      cleanups.push(() => storage.dispose());
      const base = {
        DATABASE_URL: storage.databaseUrl ?? '',
        DATA_DIR: storage.dataDir,
        NODE_ENV: 'production',
        TOKEN_RATE_LIMIT: '1000/10',
      };
      // A prefix of this run's own: parallel runs (other checkouts) never share counters.
      const shared = { ...base, REDIS_URL: testRedisUrl() ?? '', REDIS_KEY_PREFIX: `test-${randomUUID()}` };
      const starting = [
        startServiceProcess(shared),
        startServiceProcess(shared),
        startServiceProcess(base),
        startServiceProcess(base),
      ];
      for (const service of starting) cleanups.push(() => service.then((started) => started.kill()));
      const [sharedA, sharedB, aloneA, aloneB] = await Promise.all(starting);
      const db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir });
      const limit = { requests: 10, perSeconds: 60 };
      const withRedis = (
        await db.issueToken(testToken({ name: 'replicated', scopes: ['plants:read'], rateLimit: limit }))
      ).token;
      const withoutRedis = (
        await db.issueToken(testToken({ name: 'per-process', scopes: ['plants:read'], rateLimit: limit }))
      ).token;
      await db.close();

      /** 30 requests alternated between the two replicas: how many each accepted and refused. */
      async function alternate(urls: readonly [string, string], token: string) {
        const counts = urls.map(() => ({ accepted: 0, refused: 0, other: 0 }));
        for (let index = 0; index < 30; index++) {
          const replica = index % 2;
          const { status } = await request(urls[replica] ?? '', '/plants', { token });
          const count = counts[replica];
          if (count === undefined) continue;
          if (status === 200) count.accepted++;
          else if (status === 429) count.refused++;
          else count.other++;
        }
        return counts;
      }
      const sharedCounts = await alternate([sharedA?.url ?? '', sharedB?.url ?? ''], withRedis);
      const aloneCounts = await alternate([aloneA?.url ?? '', aloneB?.url ?? ''], withoutRedis);
      const describeCounts = (counts: typeof sharedCounts) =>
        counts.map((count, index) => `replica ${index + 1}: ${count.accepted} accepted, ${count.refused} refused`);
      const total = (counts: typeof sharedCounts) => counts.reduce((sum, count) => sum + count.accepted, 0);
      console.log(
        [
          `limit ${limit.requests} requests per ${limit.perSeconds} s, 30 requests alternated between two replicas:`,
          `  with REDIS_URL:    ${describeCounts(sharedCounts).join('; ')}; accepted in all: ${total(sharedCounts)}`,
          `  without REDIS_URL: ${describeCounts(aloneCounts).join('; ')}; accepted in all: ${total(aloneCounts)}`,
        ].join('\n'),
      );
      expect(sharedCounts.map((count) => count.other)).toEqual([0, 0]);
      expect(total(sharedCounts)).toBe(limit.requests);
      // Each process counts alone: each accepts the whole limit.
      expect(aloneCounts.map((count) => count.accepted)).toEqual([limit.requests, limit.requests]);
    });
  },
);

/** Whether the service says its counts are shared through Redis (`rate_limits_shared`). */
async function sharedGauge(service: TestService): Promise<number | undefined> {
  return sample((await request(service.url, '/metrics')).text, 'rate_limits_shared');
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`not true within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('Redis unreachable: each process limits alone (fail open to per-process limits)', () => {
  it('starts and limits per process when nothing listens at REDIS_URL', async () => {
    const storage = await createTestStorage('pglite', { migrated: true });
    const port = await freePort();
    const service = await startTestService(storage, {
      REDIS_URL: `redis://127.0.0.1:${port}`,
      TOKEN_RATE_LIMIT: 'off',
    });
    try {
      const { token } = await service.db.issueToken(
        testToken({
          name: 'unshared',
          scopes: ['plants:read'],
          rateLimit: { requests: 3, perSeconds: 60 },
        }),
      );
      expect(await statuses(service.url, token, 4)).toEqual([200, 200, 200, 429]);
      expect(await sharedGauge(service)).toBe(0);
      expect(service.logs.join('')).toContain('rate limits: Redis is not ready; each process limits on its own');
    } finally {
      await service.close();
      await storage.dispose();
    }
  });

  describe.skipIf(testRedisUrl() === undefined)('a Redis of its own, killed, frozen and started again', () => {
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
      inspector = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
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
    const countIn = async (key: string) => {
      await inspector.connect().catch(() => {});
      return inspector.get(key);
    };

    it('counts in Redis while it answers, per process while it is away, and in Redis again once it is back', {
      timeout: 60_000,
    }, async () => {
      expect(await sharedGauge(service)).toBe(1);
      const before = await issue('before-outage');
      expect(await statuses(service.url, before.token, 4)).toEqual([200, 200, 200, 429]);
      expect(await countIn(before.key)).toBe('4');

      // Killed: connection refused, reconnecting. Every request is counted per process.
      inspector.disconnect();
      await redis.kill();
      const during = await issue('during-outage');
      expect(await statuses(service.url, during.token, 4)).toEqual([200, 200, 200, 429]);
      expect(await sharedGauge(service)).toBe(0);
      expect(service.logs.join('')).toMatch(/rate limits: (Redis is unreachable|the connection to Redis closed)/);

      // Back (empty: it keeps nothing): shared again, counting from zero in Redis.
      await redis.start();
      await waitFor(async () => (await sharedGauge(service)) === 1, 10_000);
      expect(service.logs.join('')).toContain('rate limits: Redis is ready; limits are shared by every replica');
      const after = await issue('after-outage');
      expect(await statuses(service.url, after.token, 4)).toEqual([200, 200, 200, 429]);
      expect(await countIn(after.key)).toBe('4');

      // Frozen (SIGSTOP): the connection stays open and nothing answers. The first request waits
      // for the command timeout (250 ms); every one is counted per process (what reaches Redis,
      // and what comes after, in rate-limits-frozen-redis.test.ts).
      const frozen = await issue('frozen');
      redis.freeze();
      const stalled = await statuses(service.url, frozen.token, 4);
      redis.thaw();
      expect(stalled).toEqual([200, 200, 200, 429]);
    });
  });
});
