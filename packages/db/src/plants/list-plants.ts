import { INT64_MAX, type ListPlantsQuery } from '@plant-store/schema';
import { translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';

/**
 * One page of plants, written as the JSON the contract answers with: PostgreSQL writes it, so
 * the service neither parses the rows nor encodes them again. A page cost the service about twice
 * a create's CPU when its 21 rows were parsed into objects and encoded back (issue 12).
 */
export interface PlantPage {
  /**
   * The page's plants as a JSON array, ascending by id: at most `limit` Plant objects, ids as
   * exact JSON integers, `tag` absent when the plant has none; as compact as `stringifyJson`
   * writes the same plants, byte for byte.
   */
  readonly json: string;
  /** The id of the page's last plant; undefined when the page is empty. */
  readonly lastId: bigint | undefined;
  /** Whether more plants follow the last one (with the same tag filter). */
  readonly hasMore: boolean;
}

/**
 * A plant as the wire's JSON object, written by PostgreSQL from a row `s`: `to_json` escapes a
 * string as JSON.stringify does (the same short escapes, `\u00xx` for other control characters),
 * and an int8's text is its exact decimal.
 */
const PLANT_JSON = `'{"id":' || s.id::text || ',"name":' || to_json(s.name)::text
  || coalesce(',"tag":' || to_json(s.tag)::text, '') || '}'`;

/**
 * One page out of at most `take` (= limit + 1) rows read by `rows` in id order, as one row: how
 * many rows were read (`limit + 1` means more follow), the JSON of the first `take - 1`, and the
 * last of their ids. An aggregate without GROUP BY always gives one row, for no rows too.
 */
function pageOf(rows: string, take: string): string {
  return `SELECT count(*)::int AS rows,
  '[' || coalesce(string_agg(r.doc, ',' ORDER BY r.i) FILTER (WHERE r.i < ${take}), '') || ']' AS json,
  (max(r.id) FILTER (WHERE r.i < ${take}))::text AS last_id
FROM (SELECT s.id, ${PLANT_JSON} AS doc, row_number() OVER (ORDER BY s.id) AS i FROM (${rows}) AS s) AS r`;
}

/**
 * The rows of a page of every plant, from an id on, along the primary key. `id > after` is
 * written `id >= after + 1` so that the first page (from the smallest int64) and the next ones
 * are the same statement: one text, prepared once. The sort names the column (`plants.id`).
 */
function untaggedRows(from: string, take: string): string {
  return `SELECT plants.id, plants.name, plants.tag FROM public.plants
  WHERE plants.id >= ${from}
  ORDER BY plants.id LIMIT ${take}`;
}

/**
 * The rows of a page of the plants with exactly one tag, from an id on, along the (tag, id)
 * index. `tag = x` is written as a range on purpose: with a plain equality PostgreSQL drops
 * `tag` from the sort key and may walk the primary key filtering on the tag, reading every row
 * after `after` when few of them carry it (seen in list-plants.test.ts). The range keeps (tag, id)
 * as the order, which only the (tag, id) index supplies, so the scan stops after `limit + 1`
 * matching rows.
 */
function taggedRows(tag: string, from: string, take: string): string {
  return `SELECT plants.id, plants.name, plants.tag FROM public.plants
  WHERE plants.tag >= ${tag} AND plants.tag <= ${tag} AND plants.id >= ${from}
  ORDER BY plants.tag, plants.id LIMIT ${take}`;
}

/** A page of every plant: $1 the first id it may hold (text), $2 limit + 1. */
export const LIST_PLANTS_SQL = pageOf(untaggedRows('$1::text::bigint', '$2::int'), '$2::int');

/** A page of the plants with one tag: $1 the tag, $2 the first id (text), $3 limit + 1. */
export const LIST_TAGGED_PLANTS_SQL = pageOf(taggedRows('$1::text', '$2::text::bigint', '$3::int'), '$3::int');

/**
 * Many pages of every plant in one statement: one LATERAL page per element of the arrays, each
 * as LIST_PLANTS_SQL reads and writes it, numbered by the page (from 1).
 */
export const LIST_PLANTS_BATCH_SQL = `SELECT q.n::int AS n, page.rows, page.json, page.last_id
FROM unnest($1::text[]::bigint[], $2::int[]) WITH ORDINALITY AS q (from_id, take, n)
CROSS JOIN LATERAL (${pageOf(untaggedRows('q.from_id', 'q.take'), 'q.take')}) AS page
ORDER BY q.n`;

/** Many pages of tagged plants in one statement, each as LIST_TAGGED_PLANTS_SQL reads and writes it. */
export const LIST_TAGGED_PLANTS_BATCH_SQL = `SELECT q.n::int AS n, page.rows, page.json, page.last_id
FROM unnest($1::text[], $2::text[]::bigint[], $3::int[]) WITH ORDINALITY AS q (tag, from_id, take, n)
CROSS JOIN LATERAL (${pageOf(taggedRows('q.tag', 'q.from_id', 'q.take'), 'q.take')}) AS page
ORDER BY q.n`;

/** A page as the statements return it. */
interface PageRow {
  readonly rows: number;
  readonly json: string;
  readonly last_id: string | null;
}

const EMPTY_PAGE: PlantPage = { json: '[]', lastId: undefined, hasMore: false };

const INT64_MIN_TEXT = (-(2n ** 63n)).toString();

/** Where a page starts: the first id it may hold (`after + 1`), as text; null when none can follow. */
function firstIdOf(after: bigint | undefined): string | null {
  if (after === undefined) return INT64_MIN_TEXT;
  // Nothing follows the largest id (and `after + 1` would leave the int64 range).
  return after === INT64_MAX ? null : (after + 1n).toString();
}

/** A page out of its row: `limit + 1` rows were read, to know whether another page follows. */
function toPage(row: PageRow | undefined, limit: number): PlantPage {
  if (row === undefined) throw new Error('a page statement returned no row');
  return { json: row.json, lastId: row.last_id === null ? undefined : BigInt(row.last_id), hasMore: row.rows > limit };
}

/**
 * One page of plants in id order: those after `after` (exclusive), with exactly `tag` when
 * given. Reads `limit + 1` rows at most, along the primary key or the (tag, id) index, so
 * that it knows whether another page follows without a second query or a count. Through the
 * driver, as findPlant.
 */
export async function listPlants(sql: SqlRunner, { limit, tag, after }: ListPlantsQuery): Promise<PlantPage> {
  const from = firstIdOf(after);
  if (from === null) return EMPTY_PAGE;
  try {
    const { rows } =
      tag === undefined
        ? await sql.query<PageRow>(LIST_PLANTS_SQL, [from, limit + 1])
        : await sql.query<PageRow>(LIST_TAGGED_PLANTS_SQL, [tag, from, limit + 1]);
    return toPage(rows[0], limit);
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

/** A page of a batched statement: which page (from 1) it is. */
interface NumberedPageRow extends PageRow {
  readonly n: number;
}

/**
 * Many pages at once, in the order asked: each as listPlants answers it, in at most two statements
 * (the untagged pages, the tagged ones), whatever their number. A lone page of a kind goes as
 * listPlants sends it.
 */
export async function listPlantPages(sql: SqlRunner, queries: readonly ListPlantsQuery[]): Promise<PlantPage[]> {
  const pages: PlantPage[] = queries.map(() => EMPTY_PAGE);
  const untagged: PageRead[] = [];
  const tagged: (PageRead & { readonly tag: string })[] = [];
  queries.forEach(({ limit, tag, after }, index) => {
    const from = firstIdOf(after);
    if (from === null) return;
    if (tag === undefined) untagged.push({ index, limit, from });
    else tagged.push({ index, limit, from, tag });
  });

  /** Reads a batch with one statement (or the single one, for one page) and files its pages. */
  const readBatch = async (batch: readonly PageRead[], statement: () => Promise<{ rows: NumberedPageRow[] }>) => {
    const [only] = batch;
    if (only === undefined) return;
    if (batch.length === 1) {
      pages[only.index] = await listPlants(sql, queries[only.index] ?? { limit: only.limit });
      return;
    }
    let rows: NumberedPageRow[];
    try {
      ({ rows } = await statement());
    } catch (error) {
      throw translateError(error);
    }
    const rowOf: (PageRow | undefined)[] = batch.map(() => undefined);
    for (const row of rows) rowOf[row.n - 1] = row;
    batch.forEach((page, position) => {
      pages[page.index] = toPage(rowOf[position], page.limit);
    });
  };
  await Promise.all([
    readBatch(untagged, () =>
      sql.query<NumberedPageRow>(LIST_PLANTS_BATCH_SQL, [
        untagged.map(({ from }) => from),
        untagged.map(({ limit }) => limit + 1),
      ]),
    ),
    readBatch(tagged, () =>
      sql.query<NumberedPageRow>(LIST_TAGGED_PLANTS_BATCH_SQL, [
        tagged.map(({ tag }) => tag),
        tagged.map(({ from }) => from),
        tagged.map(({ limit }) => limit + 1),
      ]),
    ),
  ]);
  return pages;
}
