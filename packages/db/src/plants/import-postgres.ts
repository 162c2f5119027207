import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setImmediate } from 'node:timers/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { ImportRejectedError } from '../errors.js';
import { translateError } from '../prisma-errors.js';
import {
  concurrentConflictSql,
  createStagingTableSql,
  IdOrder,
  type ImportLine,
  type ImportOptions,
  type ImportResult,
  type MergeRow,
  mergeImportSql,
  mergeOutcome,
  mergeParameters,
} from './import-plants.js';

/** The import's staging table on PostgreSQL: the session's own, dropped after the import (or with the connection). */
const STAGING_TABLE = 'plant_import_rows';
/** Lines sent to COPY in one chunk: one write of some tens of KB rather than one per line. */
const LINES_PER_CHUNK = 512;
/** Lines staged by one COPY (its own transaction): some hundreds of KB. */
const STAGE_LINES = 16 * LINES_PER_CHUNK;

/**
 * Imports on PostgreSQL, on a connection of its own (the bulk pool: no statement timeout): the lines
 * are staged with `COPY ... FROM STDIN` into the session's temporary table as they are read, some
 * hundreds of KB a COPY (backpressure end to end: the request is read as fast as the database takes
 * it), then, in one transaction, one statement checks them and inserts the new plants with their
 * events (see mergeImportSql). A broken
 * rule, a failing line (the iterable throws: invalid JSON, a NewPlant rule) or an abort rolls it all
 * back: nothing of the import is stored, and the connection is closed rather than reused.
 */
export async function importPlantsPostgres(
  pool: pg.Pool,
  lines: AsyncIterable<ImportLine>,
  options: ImportOptions,
): Promise<ImportResult> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw translateError(error);
  }
  // A COPY stopped half-way fails the connection under us: that must not end the process.
  const ignore = () => {};
  client.on('error', ignore);
  let failed = false;
  try {
    // Staged before the transaction, in COPYs of STAGE_LINES lines, each its own short transaction:
    // a transaction that has written holds back the oldest running transaction id of the whole
    // server, which the event feed and the fan-out wait out (in every database on it), so the
    // transaction may last as long as the database works, never as long as a client takes to send.
    await client.query(createStagingTableSql(STAGING_TABLE, false));
    const order = new IdOrder();
    for await (const batch of batches(copyText(lines, options.signal, order))) {
      await pipeline(
        Readable.from(batch),
        client.query(copyFrom(`COPY ${STAGING_TABLE} (line, id, name, tag) FROM STDIN`)),
      );
    }
    await client.query('BEGIN');
    const { unaccounted, ...result } = await merge(client, options, order.ascending);
    if (unaccounted > 0) {
      // Another session created some of these ids after the statement's snapshot: the same plants
      // count as already stored, another content is a conflict (read now, committed).
      const conflict = (await client.query<{ line: string; id: string }>(concurrentConflictSql(STAGING_TABLE))).rows[0];
      if (conflict !== undefined) throw ImportRejectedError.storedConflict(Number(conflict.line), BigInt(conflict.id));
    }
    await client.query('COMMIT');
    await client.query(`DROP TABLE ${STAGING_TABLE}`);
    return { ...result, alreadyStored: result.alreadyStored + unaccounted };
  } catch (error) {
    failed = true;
    throw translateError(error);
  } finally {
    // After a failure the connection may be mid-COPY or mid-transaction: closed, never reused.
    client.release(failed ? true : undefined);
    client.off('error', ignore);
  }
}

/**
 * The merge (see mergeImportSql), its plants inserted plainly, in a savepoint: when a create of one
 * of the ids committed after the statement's snapshot (the insert meets a unique violation on the
 * plants' primary key), the savepoint is rolled back and the merge runs again in a new snapshot with
 * `ON CONFLICT (id) DO NOTHING`, which sees that create (as already stored, or as a conflict) or
 * skips one committed later still (the caller then checks those: concurrentConflictSql). Only the
 * merge is undone, never the staged lines: the client's answer is the same as without the race.
 */
async function merge(
  client: pg.PoolClient,
  options: ImportOptions,
  uniqueIds: boolean,
): Promise<ReturnType<typeof mergeOutcome>> {
  await client.query('SAVEPOINT plant_import_merge');
  try {
    const { rows } = await client.query<MergeRow>(
      mergeImportSql(STAGING_TABLE, { uniqueIds, onConflict: false }),
      mergeParameters(options),
    );
    return mergeOutcome(rows[0]);
  } catch (error) {
    if (!isPlantsKeyViolation(error)) throw error;
  }
  await client.query('ROLLBACK TO SAVEPOINT plant_import_merge');
  const { rows } = await client.query<MergeRow>(
    mergeImportSql(STAGING_TABLE, { uniqueIds, onConflict: true }),
    mergeParameters(options),
  );
  return mergeOutcome(rows[0]);
}

/** A unique violation of the plants' primary key, as node-postgres reports it. */
function isPlantsKeyViolation(error: unknown): boolean {
  const { code, constraint } = error as { code?: unknown; constraint?: unknown };
  return code === '23505' && constraint === 'plants_pkey';
}

/** Chunks of copyText gathered into one COPY's worth: STAGE_LINES lines, about 1 MB. */
async function* batches(chunks: AsyncIterable<string>): AsyncGenerator<string[]> {
  let batch: string[] = [];
  for await (const chunk of chunks) {
    batch.push(chunk);
    if (batch.length * LINES_PER_CHUNK >= STAGE_LINES) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** The lines as COPY's text format: `line, id, name, tag` (tag `\N` when absent), tab-separated. */
export async function* copyText(
  lines: AsyncIterable<ImportLine>,
  signal?: AbortSignal,
  order?: IdOrder,
): AsyncGenerator<string> {
  let chunk = '';
  let count = 0;
  for await (const { line, value: plant } of lines) {
    signal?.throwIfAborted();
    order?.see(plant.id);
    chunk += `${line}\t${plant.id}\t${copyField(plant.name)}\t${plant.tag === undefined ? '\\N' : copyField(plant.tag)}\n`;
    if (++count === LINES_PER_CHUNK) {
      yield chunk;
      chunk = '';
      count = 0;
      // The lines of a body already received are judged and sent without waiting for I/O: let the
      // event loop serve other requests between chunks (one turn per LINES_PER_CHUNK lines).
      await setImmediate();
    }
  }
  signal?.throwIfAborted();
  if (chunk !== '') yield chunk;
}

const COPY_SPECIAL = /[\\\n\r\t]/g;
const COPY_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** A text value as COPY's text format reads it back exactly: backslash, newline, CR and tab escaped. */
function copyField(text: string): string {
  return text.replace(COPY_SPECIAL, (special) => COPY_ESCAPES[special] ?? special);
}
