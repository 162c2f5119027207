import { type ListPlantsQuery, type StoredPlant, stringifyJson } from '@plant-store/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlRunner } from '../sql-runner.js';
import { openTestClient } from '../test-support/open-test-client.js';
import { readPage } from '../test-support/plant-pages.js';
import { createTestStorage, type TestStorage, testEngines } from '../testing.js';
import { listPlantPages, listPlants } from './list-plants.js';

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

/** The driver as database.ts uses it, recording the statements sent, and a way to EXPLAIN them. */
interface PlanHarness {
  readonly sql: SqlRunner;
  readonly sent: SentQuery[];
  /** Runs one statement on the driver, unrecorded. */
  rawQuery(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

async function openPlanHarness(storage: TestStorage): Promise<PlanHarness> {
  const client = await openTestClient(storage, 1);
  const sent: SentQuery[] = [];
  return {
    sql: {
      query(text, values) {
        sent.push({ query: text, params: values });
        return client.sql.query(text, values);
      },
    },
    sent,
    rawQuery: (text, params = []) => client.rows<Record<string, unknown>>(text, params),
    close: () => client.close(),
  };
}

/** A parameter as an SQL literal (the test's own values: text, numbers and arrays of them only). */
function literal(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return `'${value.replaceAll("'", "''")}'`;
  if (Array.isArray(value)) return `ARRAY[${value.map(literal).join(', ')}]`;
  throw new Error(`no literal for ${String(value)}`);
}

/**
 * Runs a statement listPlants sent under `EXPLAIN ANALYZE`, with its parameters, on the driver:
 * with a plan made for these values (`custom`), or, as a prepared statement reused many times
 * may be planned in production, with the generic plan made without them (`generic`).
 */
async function explainAnalyze(
  harness: PlanHarness,
  statement: SentQuery,
  mode: 'custom' | 'generic',
): Promise<PlanNode> {
  let explained: unknown;
  if (mode === 'custom') {
    [explained] = (await harness.rawQuery(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.query}`, statement.params)).map(
      (row) => row['QUERY PLAN'],
    );
  } else {
    await harness.rawQuery(`PREPARE plan_check AS ${statement.query}`);
    try {
      await harness.rawQuery('SET plan_cache_mode = force_generic_plan');
      const args = statement.params.map(literal).join(', ');
      [explained] = (await harness.rawQuery(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE plan_check(${args})`)).map(
        (row) => row['QUERY PLAN'],
      );
    } finally {
      await harness.rawQuery('RESET plan_cache_mode');
      await harness.rawQuery('DEALLOCATE plan_check');
    }
  }
  // Both drivers parse json columns; a string would mean one stopped doing so.
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
    storage = await createTestStorage(engine, { migrated: true });
    harness = await openPlanHarness(storage);
    await harness.rawQuery(SEED_SQL);
    await harness.rawQuery('ANALYZE plants');
  });
  afterAll(async () => {
    await harness?.close();
    await storage?.dispose();
  });

  it.each(cases)(
    'reads at most limit + 1 rows, along an index, planned for its values or not: $name',
    async ({ query }) => {
      harness.sent.length = 0;
      const page = await listPlants(harness.sql, query);
      expect(readPage(page)).toEqual(expectedPage(query));
      if (query.after === 2n ** 63n - 1n) {
        // Nothing can follow the largest id: answered without a statement.
        expect(harness.sent).toHaveLength(0);
        return;
      }

      expect(harness.sent).toHaveLength(1);
      const [statement] = harness.sent;
      if (!statement) throw new Error('listPlants sent no statement');
      await expectBoundedPlans(harness, statement, query.tag !== undefined, query.limit + 1);
    },
  );

  it('answers many pages with one statement per kind, each page as alone and as bounded', async () => {
    const queries = cases.map(({ query }) => query);
    harness.sent.length = 0;
    expect((await listPlantPages(harness.sql, queries)).map(readPage)).toEqual(queries.map(expectedPage));
    // The untagged pages and the tagged ones, each a batch (the page after the largest id: none).
    expect(harness.sent).toHaveLength(2);
    const pages = (tags: boolean) =>
      queries.filter((query) => (query.tag !== undefined) === tags && query.after !== 2n ** 63n - 1n).length;
    for (const statement of harness.sent) {
      const tags = statement.query.includes('q.tag');
      // Every page reads at most limit + 1 rows: at most the largest page's, times the pages.
      await expectBoundedPlans(harness, statement, tags, 101 * pages(tags));
    }
  });
});

/** Names and tags whose JSON needs escapes, or none; stored as any client may send them. */
const AWKWARD_TEXTS = [
  'quote " backslash \\ slash /',
  'controls \b\f\n\r\t \u0001 \u001f and delete \u007f',
  'separators \u2028 \u2029',
  'accents é ñ, CJK 植物, emoji 🌵🪴',
  "<b>&amp;</b> 'single'",
];

describe.each(testEngines())('the JSON of a page on %s', (engine) => {
  let storage: TestStorage;
  let harness: PlanHarness;
  // Around the int64 limits and past 2^53, where a double would round them.
  const ids = [-(2n ** 63n), -(2n ** 53n) - 1n, 0n, 2n ** 53n + 1n, 2n ** 63n - 2n, 2n ** 63n - 1n];
  const plants: StoredPlant[] = ids.map((id, index) => {
    const text = AWKWARD_TEXTS[index % AWKWARD_TEXTS.length] ?? '';
    return index === 2 ? { id, name: text } : { id, name: text, tag: `tag ${text}` };
  });

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    harness = await openPlanHarness(storage);
    for (const { id, name, tag } of plants) {
      await harness.rawQuery('INSERT INTO plants (id, name, tag) VALUES ($1::text::bigint, $2, $3)', [
        id.toString(),
        name,
        tag ?? null,
      ]);
    }
  });
  afterAll(async () => {
    await harness?.close();
    await storage?.dispose();
  });

  it('is what the service encodes for the same plants, byte for byte, ids exact, no tag when none', async () => {
    const all = await listPlants(harness.sql, { limit: 100 });
    expect(all).toEqual({ json: stringifyJson(plants), lastId: 2n ** 63n - 1n, hasMore: false });
    const firstTwo = await listPlants(harness.sql, { limit: 2, after: -(2n ** 63n) });
    expect(firstTwo).toEqual({ json: stringifyJson(plants.slice(1, 3)), lastId: 0n, hasMore: true });
    const [tagged] = plants.filter((plant) => plant.id === 2n ** 53n + 1n);
    const byTag = await listPlants(harness.sql, { limit: 5, tag: tagged?.tag ?? '' });
    expect(byTag).toEqual({ json: stringifyJson([tagged]), lastId: 2n ** 53n + 1n, hasMore: false });
  });

  it('is the same when pages are read together in one statement', async () => {
    const queries: ListPlantsQuery[] = [{ limit: 100 }, { limit: 2, after: -(2n ** 63n) }, { limit: 1, after: 0n }];
    const alone = [];
    for (const query of queries) alone.push(await listPlants(harness.sql, query));
    harness.sent.length = 0;
    expect(await listPlantPages(harness.sql, queries)).toEqual(alone);
    expect(harness.sent).toHaveLength(1);
  });
});

/**
 * The statement's plan, made for its values and generic, reads along the right index (the (tag,
 * id) index with a tag, the primary key without), never scans the table, filters nothing out,
 * and reads at most `maxRows` rows from any index scan.
 */
async function expectBoundedPlans(harness: PlanHarness, statement: SentQuery, tagged: boolean, maxRows: number) {
  for (const mode of ['custom', 'generic'] as const) {
    const plan = await explainAnalyze(harness, statement, mode);
    const nodes = planNodes(plan);
    const shown = `${mode} plan of\n${statement.query}\n${JSON.stringify(statement.params)}\n${describePlan(plan)}`;

    expect(
      nodes.map((node) => node['Node Type']),
      shown,
    ).not.toContain('Seq Scan');
    // With a tag, only the (tag, id) index bounds the read: walking the primary key and filtering
    // on the tag reads every row up to the next match, however far that is.
    const index = tagged ? 'plants_tag_id_idx' : 'plants_pkey';
    expect(
      nodes.some(
        (node) =>
          (node['Node Type'] === 'Index Scan' || node['Node Type'] === 'Index Only Scan') &&
          node['Index Name'] === index,
      ),
      shown,
    ).toBe(true);
    for (const node of nodes.filter((node) => node['Index Name'] !== undefined)) {
      expect(node['Actual Rows'] * node['Actual Loops'], shown).toBeLessThanOrEqual(maxRows);
      expect(node['Rows Removed by Filter'] ?? 0, shown).toBe(0);
      expect(node['Rows Removed by Index Recheck'] ?? 0, shown).toBe(0);
    }
  }
}
