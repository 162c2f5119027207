import type { PGlite } from '@electric-sql/pglite';
import {
  createStagingTableSql,
  IdOrder,
  type ImportLine,
  type ImportOptions,
  type ImportResult,
  type MergeRow,
  mergeImportSql,
  mergeOutcome,
  mergeParameters,
  STAGING_BATCH_ROWS,
} from './import-plants.js';

/** Each import's staging table has a name of its own: PGlite's one session is every request's. */
let imports = 0;

/**
 * Imports on the embedded database, which runs one statement at a time for every request. The lines
 * go into a temporary table of this import's own in multi-row INSERTs of STAGING_BATCH_ROWS lines,
 * each its own statement: between two, other requests' statements run (an import does not hold the
 * database while it is being uploaded), and they see nothing of it. Then one statement, in a
 * transaction, checks and inserts (see mergeImportSql): the database is held for that statement
 * only, and other requests wait for it. Nothing is stored unless it all is; the table is dropped
 * whatever happens.
 */
export async function importPlantsPGlite(
  pglite: PGlite,
  lines: AsyncIterable<ImportLine>,
  options: ImportOptions,
): Promise<ImportResult> {
  const table = `plant_import_${++imports}`;
  await pglite.query(createStagingTableSql(table, false));
  try {
    const insert = `INSERT INTO ${table} (line, id, name, tag)
      SELECT * FROM unnest($1::text[]::bigint[], $2::text[]::bigint[], $3::text[], $4::text[])`;
    let batch = newBatch();
    const order = new IdOrder();
    for await (const { line, value: plant } of lines) {
      options.signal?.throwIfAborted();
      order.see(plant.id);
      batch.lines.push(String(line));
      batch.ids.push(plant.id.toString());
      batch.names.push(plant.name);
      batch.tags.push(plant.tag ?? null);
      if (batch.lines.length === STAGING_BATCH_ROWS) {
        await pglite.query(insert, [batch.lines, batch.ids, batch.names, batch.tags]);
        batch = newBatch();
      }
    }
    options.signal?.throwIfAborted();
    if (batch.lines.length > 0) await pglite.query(insert, [batch.lines, batch.ids, batch.names, batch.tags]);
    return await pglite.transaction(async (tx) => {
      const shape = { uniqueIds: order.ascending, onConflict: false };
      const { rows } = await tx.query<MergeRow>(mergeImportSql(table, shape), mergeParameters(options));
      // A broken rule throws: the transaction rolls back. One session: nothing else ran meanwhile.
      const { unaccounted, ...result } = mergeOutcome(rows[0]);
      return { ...result, alreadyStored: result.alreadyStored + unaccounted };
    });
  } finally {
    await pglite.query(`DROP TABLE IF EXISTS ${table}`);
  }
}

function newBatch(): { lines: string[]; ids: string[]; names: string[]; tags: (string | null)[] } {
  return { lines: [], ids: [], names: [], tags: [] };
}
