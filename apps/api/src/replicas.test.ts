import { openDatabase } from '@plant-store/db';
import { testEngines, testToken } from '@plant-store/db/testing';
import { stringifyJson } from '@plant-store/schema';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { failOnContractViolations } from './test-support/checked-fetch.js';
import { serviceLifecycle } from './test-support/service-lifecycle.js';
import { type ServiceProcess, startServiceProcess } from './test-support/service-process.js';
import { request, type TestResponse } from './test-support/test-service.js';

failOnContractViolations();

const IDS = 200;
/** Ids in flight at once; each sends all its creates together. */
const CONCURRENT_IDS = 8;

/** The JSON lines a service process logged, whatever its logger's key for the message. */
function logged(service: ServiceProcess, message: string): Array<Record<string, unknown>> {
  return service
    .output()
    .split('\n')
    .flatMap((line) => {
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        return (entry.msg ?? entry.message) === message ? [entry] : [];
      } catch {
        return [];
      }
    });
}

function appliedMigrations(service: ServiceProcess): string[] {
  return logged(service, 'applied migrations').flatMap((entry) => entry.migrations as string[]);
}

interface Plant {
  readonly id: bigint;
  readonly name: string;
  readonly tag?: string;
}

/** What the creates of one id send: content 0 several times, 1 and 2 once each; 2 differs from 0 by its tag alone. */
type ContentIndex = 0 | 1 | 2;
function contentsOf(id: bigint): Record<ContentIndex, Plant> {
  return {
    0: { id, name: `plant ${id}`, tag: 'same' },
    1: { id, name: `other ${id}`, tag: 'same' },
    2: { id, name: `plant ${id}` },
  };
}

interface Attempt {
  readonly content: ContentIndex;
  readonly replica: 0 | 1;
  readonly response: TestResponse;
}

function shuffled<T>(items: T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

/** Runs `work` on every item, `concurrency` at a time. */
async function forEachConcurrently<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

describe.skipIf(!testEngines().includes('postgres'))('two replicas on one PostgreSQL database', () => {
  const { cleanups, storage: newStorage } = serviceLifecycle('postgres');

  // Two service processes and 2,400 requests: tens of seconds on a machine busy with other work.
  it('start together on an empty database, apply each migration once, and agree on every id', {
    timeout: 180_000,
  }, async () => {
    // Not migrated: the replicas apply the migrations themselves.
    const storage = await newStorage(false);
    const databaseUrl = storage.databaseUrl ?? '';
    const env = { DATABASE_URL: databaseUrl, DATA_DIR: storage.dataDir, NODE_ENV: 'production' };

    // Both at the same instant on the empty database: both apply migrations at start.
    const startedAt = performance.now();
    const starting = [startServiceProcess(env), startServiceProcess(env)];
    for (const service of starting) cleanups.push(() => service.then((started) => started.kill()).catch(() => {}));
    const replicas = await Promise.all(starting);
    const upSeconds = (performance.now() - startedAt) / 1000;
    const urls = replicas.map((replica) => replica.url);

    // Each migration applied exactly once, by one replica or the other, and nothing left pending.
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    cleanups.push(() => admin.end());
    const { rows: migrationRows } = await admin.query<{ name: string; copies: number; done: boolean }>(
      `SELECT migration_name AS name, count(*)::int AS copies,
              bool_and(finished_at IS NOT NULL AND rolled_back_at IS NULL) AS done
         FROM _prisma_migrations GROUP BY migration_name ORDER BY migration_name`,
    );
    const [appliedByFirst, appliedBySecond] = replicas.map(appliedMigrations) as [string[], string[]];
    expect(migrationRows.length).toBeGreaterThan(0);
    expect(migrationRows.filter((row) => row.copies !== 1 || !row.done)).toEqual([]);
    expect([...appliedByFirst, ...appliedBySecond].sort()).toEqual(migrationRows.map((row) => row.name));
    const db = await openDatabase({ url: databaseUrl, dataDir: storage.dataDir });
    cleanups.push(() => db.close());
    expect(db.appliedMigrations).toEqual([]);
    // A limit of its own far above the storm: every request is counted, none is refused.
    const { token } = await db.issueToken(
      testToken({
        name: 'replicas',
        scopes: ['plants:read', 'plants:write'],
        rateLimit: { requests: 1_000_000, perSeconds: 1 },
      }),
    );

    // Per id: content 0 four times (twice through each replica) and contents 1 and 2 once each,
    // through one replica each; all six at once, in random order.
    const ids = Array.from({ length: IDS }, (_, k) => 9223372036854775807n - BigInt(k) * 92233720368547758n);
    const plan: Array<Pick<Attempt, 'content' | 'replica'>> = [
      { content: 0, replica: 0 },
      { content: 0, replica: 1 },
      { content: 0, replica: 0 },
      { content: 0, replica: 1 },
      { content: 1, replica: 0 },
      { content: 2, replica: 1 },
    ];
    const attempts = new Map<bigint, Attempt[]>();
    const stormStartedAt = performance.now();
    await forEachConcurrently(ids, CONCURRENT_IDS, async (id) => {
      const contents = contentsOf(id);
      const sent = await Promise.all(
        shuffled(plan).map(async ({ content, replica }) => {
          const body = stringifyJson(contents[content]);
          const response = await request(urls[replica] ?? '', '/plants', { body, token });
          return { content, replica, response };
        }),
      );
      attempts.set(id, sent);
    });
    const stormSeconds = (performance.now() - stormStartedAt) / 1000;
    const all = [...attempts.values()].flat();
    expect(all.filter((attempt) => attempt.response.status >= 500).map((attempt) => attempt.response.text)).toEqual([]);
    const winners = new Map<bigint, Plant>();
    const wins = [0, 0, 0];
    for (const [id, sent] of attempts) {
      const won = [...new Set(sent.filter((attempt) => attempt.response.status === 200).map(({ content }) => content))];
      expect(won, `id ${id}: contents answered 200`).toHaveLength(1);
      const winner = won[0] ?? 0;
      wins[winner] = (wins[winner] ?? 0) + 1;
      const stored = contentsOf(id)[winner];
      winners.set(id, stored);
      for (const { content, response } of sent) {
        if (content === winner) {
          expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: stored });
        } else {
          expect({ status: response.status, error: (response.body as { error?: unknown }).error }).toEqual({
            status: 400,
            error: 409n,
          });
        }
      }
    }
    // Content 0 is sent four times and wins most often; the others must win sometimes too, or
    // the creates did not race.
    console.log(
      `replicas up in ${upSeconds.toFixed(1)} s; ${IDS * plan.length} creates in ${stormSeconds.toFixed(1)} s; ` +
        `winning contents 0 / 1 / 2: ${wins.join(' / ')}`,
    );
    expect(wins.filter((count) => count > 0).length).toBeGreaterThan(1);

    // Exactly one row per id, holding the winner.
    const { rows } = await admin.query<{ id: string; name: string; tag: string | null }>(
      'SELECT id::text AS id, name, tag FROM plants WHERE id = ANY($1::bigint[])',
      [ids.map(String)],
    );
    expect(rows).toHaveLength(IDS);
    for (const row of rows) {
      const winner = winners.get(BigInt(row.id));
      expect({ name: row.name, tag: row.tag ?? undefined }).toEqual({ name: winner?.name, tag: winner?.tag });
    }

    // Both replicas read the same plant; a delete through either is seen by both, once.
    await forEachConcurrently(ids, CONCURRENT_IDS, async (id) => {
      const [fromFirst, fromSecond] = await Promise.all(urls.map((url) => request(url, `/plants/${id}`, { token })));
      expect(fromFirst?.status).toBe(200);
      expect(fromFirst?.body).toEqual(winners.get(id));
      expect(fromSecond?.text).toBe(fromFirst?.text);
      const deletes = await Promise.all(urls.map((url) => request(url, `/plants/${id}`, { method: 'DELETE', token })));
      expect(deletes.map((response) => response.status).sort()).toEqual([204, 404]);
      const after = await Promise.all(urls.map((url) => request(url, `/plants/${id}`, { token })));
      expect(after.map((response) => response.status)).toEqual([404, 404]);
    });
    const { rows: left } = await admin.query('SELECT 1 FROM plants WHERE id = ANY($1::bigint[])', [ids.map(String)]);
    expect(left).toEqual([]);
    for (const replica of replicas) expect(replica.alive()).toBe(true);
  });
});
