import { type AddressInfo, createServer } from 'node:net';
import type { NewPlant } from '@plant-store/schema';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseUnavailableError, PlantConflictError } from '../errors.js';
import type { SqlRunner } from '../sql-runner.js';
import { openTestClient } from '../test-support/open-test-client.js';
import { createTestStorage, type TestStorage, testEngines } from '../testing.js';
import { createPlantWriter, type PlantWriter } from './plant-writer.js';

const LIMITS = { maxQueued: 10_000, maxWaitMs: 5_000 };

/** A server that accepts connections and never answers: every connection attempt times out. */
async function silentDatabase(connectionTimeoutMillis: number) {
  const silent = createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const { port } = silent.address() as AddressInfo;
  const pool = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${port}/none`, connectionTimeoutMillis });
  return {
    sql: pool as SqlRunner,
    async close() {
      await pool.end();
      silent.close();
    },
  };
}

/**
 * The driver, as database.ts uses it (every statement of the writer goes through it), over
 * migrated storage, counting the INSERT statements sent.
 */
async function openClient(storage: TestStorage, inserts: { count: number }) {
  const client = await openTestClient(storage);
  const sql: SqlRunner = {
    query(text, values) {
      if (/\bINSERT\b/i.test(text)) inserts.count++;
      return client.sql.query(text, values);
    },
  };
  return { ...client, sql };
}

describe.each(testEngines())('group commit on %s', (engine) => {
  let storage: TestStorage;
  let client: Awaited<ReturnType<typeof openClient>>;
  let writer: PlantWriter;
  const inserts = { count: 0 };

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    client = await openClient(storage, inserts);
    writer = createPlantWriter(client.sql, { ...LIMITS, maxBatchSize: 64, maxConcurrentBatches: 2 });
  });
  afterAll(async () => {
    await client?.close();
    await storage?.dispose();
  });

  it('writes a lone create at once, as one statement', async () => {
    inserts.count = 0;
    expect(await writer.create({ id: 1n, name: 'Alone' })).toEqual({
      plant: { id: 1n, name: 'Alone' },
      version: expect.any(BigInt),
      created: true,
    });
    expect(inserts.count).toBe(1);
  });

  it('writes 500 concurrent creates in far fewer statements, each answered and stored exactly', async () => {
    inserts.count = 0;
    const plants: NewPlant[] = Array.from({ length: 500 }, (_, index) => ({
      id: 2n ** 53n + BigInt(index),
      name: `batch ${index}`,
      ...(index % 3 === 0 ? { tag: 'batched' } : {}),
    }));
    const results = await Promise.all(plants.map((plant) => writer.create(plant)));
    expect(results).toEqual(plants.map((plant) => ({ plant, version: expect.any(BigInt), created: true })));
    // Every create its own version.
    expect(new Set(results.map((result) => result.version)).size).toBe(plants.length);
    expect(inserts.count).toBeGreaterThanOrEqual(Math.ceil(500 / 64));
    expect(inserts.count).toBeLessThan(50);
    const stored = await client.prisma.plant.findMany({
      where: { id: { gte: 2n ** 53n } },
      orderBy: { id: 'asc' },
      select: { id: true, name: true, tag: true },
    });
    expect(stored).toEqual(plants.map((plant) => ({ ...plant, tag: plant.tag ?? null })));
  });

  it('answers replays, conflicts and repeated ids inside one batch exactly as single creates would', async () => {
    await writer.create({ id: 10n, name: 'Stored' });
    const burst: NewPlant[] = [
      { id: 10n, name: 'Stored' }, // replay of a stored plant
      { id: 10n, name: 'Other' }, // conflict with a stored plant
      { id: 11n, name: 'Twin' }, // new ...
      { id: 11n, name: 'Twin' }, // ... and its identical twin in the same batch: a replay
      { id: 12n, name: 'First' }, // new ...
      { id: 12n, name: 'Second' }, // ... and a differing create of it in the same batch
      { id: 13n, name: 'Plain' },
    ];
    const results = await Promise.allSettled(burst.map((plant) => writer.create(plant)));
    const outcome = results.map((result) =>
      result.status === 'fulfilled'
        ? result.value.created
          ? 'created'
          : 'replay'
        : result.reason instanceof PlantConflictError
          ? 'conflict'
          : String(result.reason),
    );
    expect(outcome[0]).toBe('replay');
    expect(outcome[1]).toBe('conflict');
    expect([outcome[2], outcome[3]].sort()).toEqual(['created', 'replay']);
    expect([outcome[4], outcome[5]].sort()).toEqual(['conflict', 'created']);
    expect(outcome[6]).toBe('created');
    const twelve = await client.prisma.plant.findUnique({ where: { id: 12n }, select: { name: true } });
    expect(burst.findIndex((plant, index) => plant.id === 12n && outcome[index] === 'created')).toBe(
      burst.findIndex((plant) => plant.id === 12n && plant.name === twelve?.name),
    );
  });

  it('fails only the create at fault when one row breaks the statement', async () => {
    const tooLong = { id: 20n, name: 'x'.repeat(300) }; // past varchar(255): only schema validation stops it
    const results = await Promise.allSettled([
      writer.create({ id: 21n, name: 'Fine' }),
      writer.create(tooLong),
      writer.create({ id: 22n, name: 'Also fine' }),
      writer.create({ id: 23n, name: 'Fine too' }),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(await client.prisma.plant.count({ where: { id: { in: [20n, 21n, 22n, 23n] } } })).toBe(3);
  });
});

describe('group commit when the database is out of reach', () => {
  it('answers the batch and every create queued behind it with DatabaseUnavailableError, without waiting again', async () => {
    const timeoutMs = 600;
    const database = await silentDatabase(timeoutMs);
    try {
      const writer = createPlantWriter(database.sql, {
        ...LIMITS,
        maxBatchSize: 64,
        maxConcurrentBatches: 1,
      });
      const started = performance.now();
      const first = writer.create({ id: 1n, name: 'First' });
      // Let the first batch start, then queue more behind it.
      await new Promise((resolve) => setImmediate(resolve));
      const queued = [2n, 3n, 4n].map((id) => writer.create({ id, name: 'Queued' }));
      const results = await Promise.allSettled([first, ...queued]);
      const elapsed = performance.now() - started;
      for (const result of results) {
        expect(result.status).toBe('rejected');
        if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(DatabaseUnavailableError);
      }
      // One timeout for everyone; the queued creates did not each wait for one of their own.
      expect(elapsed).toBeGreaterThanOrEqual(timeoutMs - 50);
      expect(elapsed).toBeLessThan(timeoutMs * 1.75);
    } finally {
      await database.close();
    }
  });
});

describe.each(testEngines().filter((engine) => engine === 'postgres'))(
  'group commit across processes on %s',
  (engine) => {
    let storage: TestStorage;
    const clients: Awaited<ReturnType<typeof openClient>>[] = [];
    beforeAll(async () => {
      storage = await createTestStorage(engine, { migrated: true });
      for (let index = 0; index < 2; index++) clients.push(await openClient(storage, { count: 0 }));
    });
    afterAll(async () => {
      for (const client of clients) await client.close();
      await storage?.dispose();
    });

    it('never deadlocks two writers inserting the same ids in opposite orders', async () => {
      const [a, b] = clients.map((client) =>
        createPlantWriter(client.sql, { ...LIMITS, maxBatchSize: 2_000, maxConcurrentBatches: 1 }),
      );
      if (!a || !b) throw new Error('two clients expected');
      for (let round = 0n; round < 5n; round++) {
        const ids = Array.from({ length: 1_500 }, (_, index) => round * 10_000n + BigInt(index));
        const results = await Promise.allSettled([
          ...ids.map((id) => a.create({ id, name: `p${id}` })),
          ...[...ids].reverse().map((id) => b.create({ id, name: `p${id}` })),
        ]);
        const failures = results.filter((result) => result.status === 'rejected');
        expect(failures.map((failure) => String((failure as PromiseRejectedResult).reason))).toEqual([]);
        const created = results.filter((result) => result.status === 'fulfilled' && result.value.created);
        expect(created).toHaveLength(ids.length);
      }
    });
  },
);

describe('group commit limits', () => {
  it('refuses creates beyond maxQueued at once', async () => {
    const database = await silentDatabase(800);
    try {
      const writer = createPlantWriter(database.sql, {
        maxBatchSize: 1,
        maxConcurrentBatches: 1,
        maxQueued: 3,
        maxWaitMs: 200,
      });
      const first = writer.create({ id: 1n, name: 'In flight' });
      // "At once": refused while the statement in flight (800 ms, silent) has not answered, not
      // after waiting for it. Judged by order, not by a wall-clock bound.
      let firstSettled = false;
      const markSettled = () => {
        firstSettled = true;
      };
      first.then(markSettled, markSettled);
      await new Promise((resolve) => setImmediate(resolve));
      const waiting = [2n, 3n, 4n].map((id) => writer.create({ id, name: 'Waiting' }));
      const refused = writer.create({ id: 5n, name: 'One too many' });
      await expect(refused).rejects.toBeInstanceOf(DatabaseUnavailableError);
      expect(firstSettled).toBe(false);
      const results = await Promise.allSettled([first, ...waiting]);
      for (const result of results) {
        expect(result.status).toBe('rejected');
        if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(DatabaseUnavailableError);
      }
    } finally {
      await database.close();
    }
  });

  it('answers 503 for creates that waited past maxWaitMs behind a slow but working statement', async () => {
    // A unit fake: a database whose statements succeed, each after 400 ms.
    const slow: SqlRunner = {
      query: <TRow>(_text: string, [ids]: unknown[]) =>
        new Promise<{ rows: TRow[] }>((resolve) =>
          setTimeout(() => resolve({ rows: (ids as string[]).map((id) => ({ id, version: '1' }) as TRow) }), 400),
        ),
    };
    const writer = createPlantWriter(slow, {
      maxBatchSize: 1,
      maxConcurrentBatches: 1,
      maxQueued: 10,
      maxWaitMs: 200,
    });
    const first = writer.create({ id: 1n, name: 'Slow but fine' });
    await new Promise((resolve) => setImmediate(resolve));
    const late = [2n, 3n].map((id) => writer.create({ id, name: 'Waited too long' }));
    expect(await first).toEqual({
      plant: { id: 1n, name: 'Slow but fine' },
      version: expect.any(BigInt),
      created: true,
    });
    for (const result of await Promise.allSettled(late)) {
      expect(result.status).toBe('rejected');
      if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(DatabaseUnavailableError);
    }
  });

  it('answers what is queued before close() resolves, and refuses creates after it', async () => {
    const inserts = { count: 0 };
    const storage = await createTestStorage('pglite', { migrated: true });
    const client = await openClient(storage, inserts);
    try {
      const writer = createPlantWriter(client.sql, {
        ...LIMITS,
        maxBatchSize: 64,
        maxConcurrentBatches: 1,
      });
      const pending = [1n, 2n, 3n].map((id) => writer.create({ id, name: 'Before close' }));
      await writer.close();
      const results = await Promise.allSettled(pending);
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
      await expect(writer.create({ id: 4n, name: 'After close' })).rejects.toBeInstanceOf(DatabaseUnavailableError);
    } finally {
      await client.close();
      await storage.dispose();
    }
  });
});
