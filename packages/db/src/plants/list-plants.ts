import { INT64_MAX, type ListPlantsQuery, type StoredPlant } from '@plant-store/schema';
import { translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';
import { type PlantRowText, toPlantRow } from './find-plant.js';
import { toStoredPlant } from './plant-record.js';

export interface PlantPage {
  /** At most `limit` plants, ascending by id. */
  readonly plants: StoredPlant[];
  /** Whether more plants follow the last one (with the same tag filter). */
  readonly hasMore: boolean;
}

/**
 * A page of every plant from an id on, along the primary key. `id > after` is written
 * `id >= after + 1` so that the first page (from the smallest int64) and the next ones are the
 * same statement: one text, prepared once. The sort names the column (`plants.id`): a bare `id`
 * would be the output's `id::text`, sorted as text and by no index.
 */
export const LIST_PLANTS_SQL = `SELECT id::text AS id, name, tag FROM public.plants
WHERE id >= $1::text::bigint
ORDER BY plants.id LIMIT $2::int`;

/**
 * A page of the plants with exactly one tag, from an id on, along the (tag, id) index. `tag = x`
 * is written as a range on purpose: with a plain equality PostgreSQL drops `tag` from the sort key
 * and may walk the primary key filtering on the tag, reading every row after `after` when few of
 * them carry it (seen in list-plants.test.ts). The range keeps (tag, id) as the order, which only
 * the (tag, id) index supplies, so the scan stops after `limit + 1` matching rows.
 */
export const LIST_TAGGED_PLANTS_SQL = `SELECT id::text AS id, name, tag FROM public.plants
WHERE tag >= $1::text AND tag <= $1::text AND id >= $2::text::bigint
ORDER BY plants.tag, plants.id LIMIT $3::int`;

/**
 * Many pages of every plant in one statement: one LATERAL scan of the primary key per page, each
 * as LIST_PLANTS_SQL reads it, the rows numbered by the page they belong to.
 */
export const LIST_PLANTS_BATCH_SQL = `SELECT q.n::int AS n, p.id::text AS id, p.name, p.tag
FROM unnest($1::text[]::bigint[], $2::int[]) WITH ORDINALITY AS q (from_id, take, n)
CROSS JOIN LATERAL (
  SELECT plants.id, plants.name, plants.tag FROM public.plants
  WHERE plants.id >= q.from_id
  ORDER BY plants.id LIMIT q.take
) AS p
ORDER BY q.n, p.id`;

/** Many pages of tagged plants in one statement, each as LIST_TAGGED_PLANTS_SQL reads it. */
export const LIST_TAGGED_PLANTS_BATCH_SQL = `SELECT q.n::int AS n, p.id::text AS id, p.name, p.tag
FROM unnest($1::text[], $2::text[]::bigint[], $3::int[]) WITH ORDINALITY AS q (tag, from_id, take, n)
CROSS JOIN LATERAL (
  SELECT plants.id, plants.name, plants.tag FROM public.plants
  WHERE plants.tag >= q.tag AND plants.tag <= q.tag AND plants.id >= q.from_id
  ORDER BY plants.tag, plants.id LIMIT q.take
) AS p
ORDER BY q.n, p.tag, p.id`;

const INT64_MIN_TEXT = (-(2n ** 63n)).toString();

/** Where a page starts: the first id it may hold (`after + 1`), as text; null when none can follow. */
function firstIdOf(after: bigint | undefined): string | null {
  if (after === undefined) return INT64_MIN_TEXT;
  // Nothing follows the largest id (and `after + 1` would leave the int64 range).
  return after === INT64_MAX ? null : (after + 1n).toString();
}

/** A page out of its rows: `limit + 1` were read, to know whether another page follows. */
function toPage(rows: readonly PlantRowText[], limit: number): PlantPage {
  return { plants: rows.slice(0, limit).map((row) => toStoredPlant(toPlantRow(row))), hasMore: rows.length > limit };
}

/**
 * One page of plants in id order: those after `after` (exclusive), with exactly `tag` when
 * given. Reads `limit + 1` rows at most, along the primary key or the (tag, id) index, so
 * that it knows whether another page follows without a second query or a count. Through the
 * driver, as findPlant.
 */
export async function listPlants(sql: SqlRunner, { limit, tag, after }: ListPlantsQuery): Promise<PlantPage> {
  const from = firstIdOf(after);
  if (from === null) return { plants: [], hasMore: false };
  try {
    const { rows } =
      tag === undefined
        ? await sql.query<PlantRowText>(LIST_PLANTS_SQL, [from, limit + 1])
        : await sql.query<PlantRowText>(LIST_TAGGED_PLANTS_SQL, [tag, from, limit + 1]);
    return toPage(rows, limit);
  } catch (error) {
    throw translateError(error);
  }
}

/** A page of a batch: where it goes in the answer, how many rows to read, and from which id. */
interface PageRead {
  readonly index: number;
  readonly limit: number;
  readonly from: string;
}

/**
 * Many pages at once, in the order asked: each as listPlants answers it, in at most two statements
 * (the untagged pages, the tagged ones), whatever their number. A lone page of a kind goes as
 * listPlants sends it.
 */
export async function listPlantPages(sql: SqlRunner, queries: readonly ListPlantsQuery[]): Promise<PlantPage[]> {
  const pages: PlantPage[] = queries.map(() => ({ plants: [], hasMore: false }));
  const untagged: PageRead[] = [];
  const tagged: (PageRead & { readonly tag: string })[] = [];
  queries.forEach(({ limit, tag, after }, index) => {
    const from = firstIdOf(after);
    if (from === null) return;
    if (tag === undefined) untagged.push({ index, limit, from });
    else tagged.push({ index, limit, from, tag });
  });

  /** Reads a batch with one statement (or the single one, for one page) and files its pages. */
  const readBatch = async (batch: readonly PageRead[], statement: () => Promise<{ rows: PageRow[] }>) => {
    const [only] = batch;
    if (only === undefined) return;
    if (batch.length === 1) {
      pages[only.index] = await listPlants(sql, queries[only.index] ?? { limit: only.limit });
      return;
    }
    let rows: PageRow[];
    try {
      ({ rows } = await statement());
    } catch (error) {
      throw translateError(error);
    }
    const rowsOf: PlantRowText[][] = batch.map(() => []);
    for (const row of rows) rowsOf[row.n - 1]?.push(row);
    batch.forEach((page, position) => {
      pages[page.index] = toPage(rowsOf[position] ?? [], page.limit);
    });
  };
  await Promise.all([
    readBatch(untagged, () =>
      sql.query<PageRow>(LIST_PLANTS_BATCH_SQL, [
        untagged.map(({ from }) => from),
        untagged.map(({ limit }) => limit + 1),
      ]),
    ),
    readBatch(tagged, () =>
      sql.query<PageRow>(LIST_TAGGED_PLANTS_BATCH_SQL, [
        tagged.map(({ tag }) => tag),
        tagged.map(({ from }) => from),
        tagged.map(({ limit }) => limit + 1),
      ]),
    ),
  ]);
  return pages;
}

/** A row of a batched page statement: which page (from 1) it belongs to. */
interface PageRow extends PlantRowText {
  readonly n: number;
}
