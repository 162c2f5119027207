import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { ListPlantsQuery, StoredPlant } from '@plant-store/schema';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrismaClient } from '../generated/prisma/client.js';
import { applyMigrations } from '../migrate.js';
import { createTestStorage, type TestEngine, type TestStorage, testEngines } from '../testing.js';
import { listPlants } from './list-plants.js';

// Enough rows that a scan of the table, or of one tag, costs far more than a page: the planner
// then has a real choice to make, and a wrong one shows in the row counts. The last quarter is
// one block of 'late' plants, so that a dense tag can end long before the table does: a plan
// that walks the primary key and filters on the tag then reads the whole block for nothing.
const PLANT_COUNT = 20_000;
const LATE_FROM = 15_001;

/**
 * The tag the seeding SQL gives an id: 'late' from LATE_FROM on; before it 'rare' on 1 in 100,
 * untagged on 1 in 50 and 'common' otherwise.
 */
function seededTag(id: number): string | undefined {
  if (id >= LATE_FROM) return 'late';
  if (id % 100 === 0) return 'rare';
  if (id % 50 === 7) return undefined;
  return 'common';
}

const SEED_SQL = `
  INSERT INTO plants (id, name, tag)
  SELECT i, 'plant ' || i,
    CASE WHEN i >= ${LATE_FROM} THEN 'late' WHEN i % 100 = 0 THEN 'rare' WHEN i % 50 = 7 THEN NULL ELSE 'common' END
  FROM generate_series(1, ${PLANT_COUNT}) AS i`;

/** The page listPlants must return, worked out from the seeding rule rather than the database. */
function expectedPage({ limit, tag, after }: ListPlantsQuery): { plants: StoredPlant[]; hasMore: boolean } {
  const matches: StoredPlant[] = [];
  for (let id = 1; id <= PLANT_COUNT && matches.length <= limit; id++) {
    const plantTag = seededTag(id);
    if ((tag === undefined || plantTag === tag) && (after === undefined || BigInt(id) > after)) {
      matches.push({ id: BigInt(id), name: `plant ${id}`, ...(plantTag === undefined ? {} : { tag: plantTag }) });
    }
  }
  return { plants: matches.slice(0, limit), hasMore: matches.length > limit };
}

/** The parts of an `EXPLAIN (ANALYZE, FORMAT JSON)` node this suite reads. */
interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Index Name'?: string;
  readonly 'Actual Rows': number;
  readonly 'Actual Loops': number;
  readonly 'Rows Removed by Filter'?: number;
  readonly 'Rows Removed by Index Recheck'?: number;
  readonly Plans?: readonly PlanNode[];
}

function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

function describePlan(node: PlanNode, depth = 0): string {
  const index = node['Index Name'] ? ` on ${node['Index Name']}` : '';
  const removed = node['Rows Removed by Filter'] ? `, ${node['Rows Removed by Filter']} removed by filter` : '';
  const line = `${'  '.repeat(depth)}${node['Node Type']}${index} (rows ${node['Actual Rows']} x ${node['Actual Loops']}${removed})`;
  return [line, ...(node.Plans ?? []).map((child) => describePlan(child, depth + 1))].join('\n');
}

interface SentQuery {
  readonly query: string;
  readonly params: unknown[];
}

/** A Prisma client that records the SQL it sends, and the raw driver beneath it to EXPLAIN that SQL. */
interface PlanHarness {
  readonly prisma: PrismaClient;
  readonly sent: SentQuery[];
  /** Runs one statement on the raw driver, bypassing Prisma. */
  rawQuery(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

/** A client built as database.ts builds it, plus query logging into `sent`. */
function createRecordingClient(adapter: PrismaPg | PrismaPGlite, sent: SentQuery[]): PrismaClient {
  const prisma = new PrismaClient({ adapter, log: [{ emit: 'event', level: 'query' }] });
  prisma.$on('query', (event) => {
    sent.push({ query: event.query, params: JSON.parse(event.params) as unknown[] });
  });
  return prisma;
}

async function openPlanHarness(engine: TestEngine, storage: TestStorage): Promise<PlanHarness> {
  const sent: SentQuery[] = [];
  if (engine === 'postgres') {
    const url = storage.databaseUrl;
    if (!url) throw new Error('the PostgreSQL test storage has no URL');
    await applyMigrations({ kind: 'postgres', connectionString: url });
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const prisma = createRecordingClient(new PrismaPg({ connectionString: url, max: 1 }), sent);
    return {
      prisma,
      sent,
      rawQuery: async (sql, params) => (await client.query(sql, params)).rows,
      async close() {
        await prisma.$disconnect();
        await client.end();
      },
    };
  }
  const pglite = await PGlite.create(join(storage.dataDir, 'pgdata'));
  await applyMigrations({ kind: 'pglite', client: pglite });
  const prisma = createRecordingClient(new PrismaPGlite(pglite), sent);
  return {
    prisma,
    sent,
    rawQuery: async (sql, params) => (await pglite.query<Record<string, unknown>>(sql, params)).rows,
    async close() {
      await prisma.$disconnect();
      await pglite.close();
    },
  };
}

/** Runs a statement Prisma sent under `EXPLAIN ANALYZE`, with its parameters, on the raw driver. */
async function explainAnalyze(harness: PlanHarness, statement: SentQuery): Promise<PlanNode> {
  const [row] = await harness.rawQuery(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.query}`, statement.params);
  // Both drivers parse json columns; a string would mean one stopped doing so.
  const explained = row?.['QUERY PLAN'];
  const [result] = (typeof explained === 'string' ? JSON.parse(explained) : explained) as { Plan: PlanNode }[];
  if (!result) throw new Error(`EXPLAIN returned no plan for ${statement.query}`);
  return result.Plan;
}

const PAGE = 20;
const cases: { readonly name: string; readonly query: ListPlantsQuery }[] = [
  { name: 'no filter', query: { limit: PAGE } },
  { name: 'no filter, the largest page', query: { limit: 100 } },
  { name: 'after near the start', query: { limit: PAGE, after: 10n } },
  { name: 'after near the end', query: { limit: PAGE, after: BigInt(PLANT_COUNT - 10) } },
  { name: 'after past the end', query: { limit: PAGE, after: 2n ** 63n - 1n } },
  { name: 'a sparse tag', query: { limit: PAGE, tag: 'rare' } },
  { name: 'a dense tag', query: { limit: PAGE, tag: 'common' } },
  { name: 'a tag that matches nothing', query: { limit: PAGE, tag: 'no such tag' } },
  { name: 'a sparse tag after an id', query: { limit: PAGE, tag: 'rare', after: 5_000n } },
  { name: 'a sparse tag near its end', query: { limit: PAGE, tag: 'rare', after: BigInt(LATE_FROM - 1_000) } },
  { name: 'a dense tag after an id', query: { limit: PAGE, tag: 'common', after: 10_000n } },
  { name: 'a dense tag near its end', query: { limit: PAGE, tag: 'common', after: BigInt(LATE_FROM - 10) } },
  { name: 'a tag held by the last ids only', query: { limit: PAGE, tag: 'late' } },
  { name: 'a tag held by the last ids only, after an early id', query: { limit: PAGE, tag: 'late', after: 10n } },
];

describe.each(testEngines())('listPlants query plans on %s', (engine) => {
  let storage: TestStorage;
  let harness: PlanHarness;

  beforeAll(async () => {
    storage = await createTestStorage(engine);
    harness = await openPlanHarness(engine, storage);
    await harness.rawQuery(SEED_SQL);
    await harness.rawQuery('ANALYZE plants');
  });
  afterAll(async () => {
    await harness?.close();
    await storage?.dispose();
  });

  it.each(cases)('reads at most limit + 1 rows, along an index: $name', async ({ query }) => {
    harness.sent.length = 0;
    const page = await listPlants(harness.prisma, query);
    expect(page).toEqual(expectedPage(query));

    expect(harness.sent).toHaveLength(1);
    const [statement] = harness.sent;
    if (!statement) throw new Error('Prisma logged no query');
    const plan = await explainAnalyze(harness, statement);
    const nodes = planNodes(plan);
    const shown = `${statement.query}\n${JSON.stringify(statement.params)}\n${describePlan(plan)}`;

    expect(
      nodes.map((node) => node['Node Type']),
      shown,
    ).not.toContain('Seq Scan');
    // With a tag, only the (tag, id) index bounds the read: walking the primary key and filtering
    // on the tag reads every row up to the next match, however far that is.
    const index = query.tag === undefined ? 'plants_pkey' : 'plants_tag_id_idx';
    expect(
      nodes.some(
        (node) =>
          (node['Node Type'] === 'Index Scan' || node['Node Type'] === 'Index Only Scan') &&
          node['Index Name'] === index,
      ),
      shown,
    ).toBe(true);
    for (const node of nodes.filter((node) => node['Node Type'].endsWith('Scan'))) {
      expect(node['Actual Rows'] * node['Actual Loops'], shown).toBeLessThanOrEqual(query.limit + 1);
      expect(node['Rows Removed by Filter'] ?? 0, shown).toBe(0);
      expect(node['Rows Removed by Index Recheck'] ?? 0, shown).toBe(0);
    }
  });
});
