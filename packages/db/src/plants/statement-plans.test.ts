import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentEventCursor, listEvents } from '../events/list-events.js';
import type { SqlRunner } from '../sql-runner.js';
import { openTestClient, type TestClient } from '../test-support/open-test-client.js';
import { createTestStorage, TEST_ACTOR, type TestEngine, type TestStorage, testEngines } from '../testing.js';
import { fanOutEvents } from '../webhooks/fan-out-events.js';
import { deleteOldWebhookData } from '../webhooks/retention.js';
import { deletePlant } from './delete-plant.js';
import { exportPlantsSql } from './export-plants.js';
import { findPlantRows } from './find-plant.js';
import { createStagingTableSql, mergeImportSql, mergeParameters } from './import-plants.js';
import { insertPlants } from './insert-plants.js';
import { listPlants } from './list-plants.js';
import { updatePlants } from './update-plants.js';

/**
 * Every statement the service runs on plants and events, run under EXPLAIN ANALYZE on a table of
 * ROWS plants and as many events: each reads the tables along an index (never a sequential scan of
 * plants or webhook_events), a page reads at most `limit + 1` rows, and an export walks an index in
 * id order without a sort. `pnpm bench -- --plants N` runs the same at up to a million rows
 * (PLANT_STORE_PLAN_ROWS; PLANT_STORE_PLAN_ENGINES picks the engines: see apps/api/bench/scale.ts).
 */
const ROWS = Number(process.env.PLANT_STORE_PLAN_ROWS ?? 100_000);
if (!Number.isInteger(ROWS) || ROWS < 100_000 || ROWS % 100 !== 0) {
  throw new Error('PLANT_STORE_PLAN_ROWS must be a multiple of 100, at least 100,000');
}
const ENGINES = (process.env.PLANT_STORE_PLAN_ENGINES?.split(',') as TestEngine[] | undefined) ?? testEngines();
/** Seeding takes a few seconds per 100,000 rows; more on a loaded machine. */
const SEED_TIMEOUT_MS = 120_000 * Math.ceil(ROWS / 100_000);
const PAGE = 20;
/** Every 100th plant is `rare`, the rest `common`. */
const SEED_SQL = `
  INSERT INTO public.plants (id, name, tag)
  SELECT i, 'plant ' || i, CASE WHEN i % 100 = 0 THEN 'rare' ELSE 'common' END FROM generate_series(1, ${ROWS}) AS i;
  INSERT INTO public.webhook_events (plant_id, type, version, payload, envelope, fanned_out_at)
  SELECT i, CASE WHEN i % 10 = 0 THEN 'plant.deleted' ELSE 'plant.created' END, i, '{}', '{"type":"x","data":{}}', now()
  FROM generate_series(1, ${ROWS}) AS i;
  ANALYZE public.plants;
  ANALYZE public.webhook_events;`;

/** The parts of an `EXPLAIN (ANALYZE, FORMAT JSON)` node read here. */
interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly 'Actual Rows': number;
  readonly 'Actual Loops': number;
  readonly Plans?: readonly PlanNode[];
}

function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

function describePlan(node: PlanNode, depth = 0): string {
  const on = node['Relation Name'] ? ` on ${node['Relation Name']}` : '';
  const index = node['Index Name'] ? ` using ${node['Index Name']}` : '';
  const line = `${'  '.repeat(depth)}${node['Node Type']}${on}${index} (rows ${node['Actual Rows']} x ${node['Actual Loops']})`;
  return [line, ...(node.Plans ?? []).map((child) => describePlan(child, depth + 1))].join('\n');
}

/** The service's tables whose scans are judged. */
const TABLES = new Set(['plants', 'webhook_events']);

/** The nodes that read one of TABLES. */
function tableReads(plan: PlanNode): PlanNode[] {
  return planNodes(plan).filter((node) => TABLES.has(node['Relation Name'] ?? ''));
}

describe.each(ENGINES)(
  `the plans of the statements on plants and events (${ROWS.toLocaleString('en-US')} rows) on %s`,
  (engine) => {
    let storage: TestStorage;
    let client: TestClient;

    /** The plans of the statements `run` sends, each run under EXPLAIN ANALYZE in a transaction rolled back. */
    async function plansOf(run: (sql: SqlRunner) => Promise<unknown>): Promise<PlanNode[]> {
      const plans: PlanNode[] = [];
      const explaining: SqlRunner = {
        async query<TRow>(text: string, values: unknown[]) {
          const [row] = await client.rows<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
          const explained = row?.['QUERY PLAN'];
          const [result] = (typeof explained === 'string' ? JSON.parse(explained) : explained) as { Plan: PlanNode }[];
          if (result === undefined) throw new Error(`no plan for ${text}`);
          plans.push(result.Plan);
          return { rows: [] as TRow[] };
        },
      };
      await client.rows('BEGIN');
      try {
        await run(explaining).catch(() => {
          // What the statement answered is not looked at here (its rows were the plan's).
        });
      } finally {
        await client.rows('ROLLBACK');
      }
      if (plans.length === 0) throw new Error('no statement was sent');
      for (const plan of plans) console.log(describePlan(plan));
      return plans;
    }

    /** Every read of plants or events is along an index (a scan of a 1,000-row staging table is the import's own). */
    function expectIndexReads(plans: readonly PlanNode[]): void {
      for (const plan of plans) {
        const reads = tableReads(plan);
        for (const read of reads) expect(read['Node Type'], describePlan(plan)).not.toBe('Seq Scan');
      }
    }

    /** At most `limit + 1` rows read from plants or events, by every node that reads them. */
    function expectPageReads(plans: readonly PlanNode[], limit: number): void {
      for (const plan of plans) {
        for (const read of tableReads(plan)) {
          expect(read['Actual Rows'] * read['Actual Loops'], describePlan(plan)).toBeLessThanOrEqual(limit + 1);
        }
      }
    }

    beforeAll(async () => {
      storage = await createTestStorage(engine, { migrated: true });
      client = await openTestClient(storage, 1);
      for (const statement of SEED_SQL.split(';').filter((text) => text.trim() !== '')) await client.rows(statement);
    }, SEED_TIMEOUT_MS);
    afterAll(async () => {
      await client?.close();
      await storage?.dispose();
    });

    it('reads a plant, or several, by its primary key', async () => {
      const plans = await plansOf((sql) => findPlantRows(sql, [50_000n]));
      expectIndexReads(plans);
      expectPageReads(plans, 0);
      const many = await plansOf((sql) => findPlantRows(sql, [1n, 50_000n, 99_999n]));
      expectIndexReads(many);
    });

    it('reads a page of plants, with and without a tag, at most limit + 1 rows', async () => {
      expectPageReads(await plansOf((sql) => listPlants(sql, { limit: PAGE, after: 50_000n })), PAGE);
      const tagged = await plansOf((sql) => listPlants(sql, { limit: PAGE, tag: 'rare', after: 50_000n }));
      expectIndexReads(tagged);
      expectPageReads(tagged, PAGE);
    });

    it('reads a page of the event feed, of every type and of one, at most limit + 1 rows', async () => {
      const [middle] = await client.rows<{ txid: string; seq: string }>(
        'SELECT txid::text AS txid, seq::text AS seq FROM public.webhook_events ORDER BY seq OFFSET $1 LIMIT 1',
        [ROWS / 2],
      );
      const after = { txid: BigInt(middle?.txid ?? 0), seq: BigInt(middle?.seq ?? 0) };
      const all = await plansOf((sql) => listEvents(sql, { limit: PAGE, after }));
      expectIndexReads(all);
      expectPageReads(all, PAGE);
      const typed = await plansOf((sql) => listEvents(sql, { limit: PAGE, after, type: 'plant.deleted' }));
      expectIndexReads(typed);
      expectPageReads(typed, PAGE);
    });

    it('fans events out from the queue, and deletes old ones, along their indexes', async () => {
      // Events queued for the fan-out: a few among the 100,000 written fanned out already.
      await client.rows(`UPDATE public.webhook_events SET fanned_out_at = NULL WHERE seq % 10000 = 0`);
      const fanOut = await plansOf((sql) => fanOutEvents(sql, { maxDeliveries: PAGE }));
      expectIndexReads(fanOut);
      expectPageReads(fanOut, PAGE);
      expectIndexReads(await plansOf((sql) => deleteOldWebhookData(sql, { olderThanMs: 0, batchSize: PAGE })));
      expectIndexReads(await plansOf((sql) => currentEventCursor(sql)));
    });

    it('creates, updates and deletes by primary key', async () => {
      expectIndexReads(
        await plansOf((sql) =>
          insertPlants(sql, [
            { id: 50_000n, name: 'again' },
            { id: -5n, name: 'new' },
          ]),
        ),
      );
      expectIndexReads(
        await plansOf((sql) =>
          updatePlants(sql, [{ id: 50_000n, patch: { name: 'renamed' }, actor: TEST_ACTOR, traceParent: undefined }]),
        ),
      );
      expectIndexReads(await plansOf((sql) => deletePlant(sql, 50_000n, TEST_ACTOR)));
    });

    it('exports every plant, or one tag, along an index in id order, without a sort', async () => {
      for (const [tag, rows, index] of [
        [undefined, ROWS, 'plants_pkey'],
        ['rare', ROWS / 100, 'plants_tag_id_idx'],
      ] as const) {
        const plans = await plansOf(async (sql) => {
          // As the export's transaction sets it (see exportPlantsPostgres).
          await client.rows('SET LOCAL enable_sort = off');
          return sql.query(exportPlantsSql(tag), []);
        });
        const plan = plans.at(-1);
        if (plan === undefined) throw new Error('no export plan');
        const nodes = planNodes(plan);
        expect(
          nodes.map((node) => node['Node Type']),
          describePlan(plan),
        ).not.toContain('Sort');
        const [read] = tableReads(plan);
        expect(read?.['Index Name'], describePlan(plan)).toBe(index);
        expect(read?.['Actual Rows'], describePlan(plan)).toBe(rows);
      }
    });

    // Lines in ascending id order are read from the staging table as they are, its size known to the
    // planner: against 100,000 stored plants it rightly reads them all for 1,000 lines (a scan costs
    // less than 1,000 probes of the primary key), so that shape is checked with 100 lines, the same
    // small share of a table as 1,000 lines of 1,000,000 plants.
    it.each([
      ['1,000 lines in any order', false, 1_000],
      ['100 lines in ascending id order', true, 100],
    ])('merges an import of %s along the primary key', async (_order, uniqueIds, lines) => {
      const plans = await plansOf(async (sql) => {
        await client.rows(createStagingTableSql('plant_import_plan', true));
        await client.rows(
          `INSERT INTO plant_import_plan SELECT i, ${ROWS} + i, 'import ' || i, NULL FROM generate_series(1, ${lines}) AS i`,
        );
        await client.rows('ANALYZE plant_import_plan');
        return sql.query(
          mergeImportSql('plant_import_plan', { uniqueIds, onConflict: false }),
          mergeParameters({ actor: TEST_ACTOR }),
        );
      });
      expectIndexReads(plans);
      // The new plants were inserted (in the transaction rolled back), each checked along the primary key.
      const inserts = plans.flatMap((plan) => planNodes(plan)).filter((node) => node['Node Type'] === 'ModifyTable');
      expect(inserts.find((node) => node['Relation Name'] === 'plants')?.['Actual Rows']).toBe(lines);
    });
  },
);
