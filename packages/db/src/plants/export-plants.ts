import { Readable } from 'node:stream';
import type { PGlite, Transaction } from '@electric-sql/pglite';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { CURRENT_CURSOR_SQL, formatCursor } from '../events/list-events.js';
import { translateError } from '../prisma-errors.js';
import { plantJson } from './plant-json.js';

export interface ExportOptions {
  /** Only the plants with this tag. */
  readonly tag?: string | undefined;
}

/** An export under way: its snapshot's place in the event feed, and its lines. */
export interface PlantExport {
  /**
   * The event feed's cursor of the export's snapshot: every event of a change the export holds is
   * at or before it, or repeats what the export holds (apply by version); every later change after it.
   */
  readonly cursor: string;
  /**
   * The plants as NDJSON, one `{"id","name","tag"?}` line each (ids exact), in ascending id order.
   * Read it to the end, or destroy it: either way its connection is given back.
   */
  readonly lines: Readable;
}

/**
 * The export's query: every plant (or one tag's) as its wire JSON, in id order, along an index: the
 * primary key, or (tag, id) for a tag. `tag` is written into the text as a literal (COPY takes no
 * parameters); see tagLiteral.
 */
export function exportPlantsSql(tag: string | undefined): string {
  return `SELECT ${plantJson('plants')} AS doc FROM public.plants AS plants${
    tag === undefined ? '' : ` WHERE plants.tag = ${tagLiteral(tag)}`
  } ORDER BY plants.id`;
}

/**
 * A string as an SQL literal: quotes doubled. Exact under `standard_conforming_strings` (on by
 * default, and set so by the export's transaction): a backslash is then an ordinary character.
 */
function tagLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * The export's session settings: the plan walks the index in id order (a sort of the whole table
 * would spill to disk before the first line went out), and literals read as written.
 */
const EXPORT_SETTINGS = ['SET LOCAL enable_sort = off', 'SET LOCAL standard_conforming_strings = on'];

/**
 * COPY's CSV form with a delimiter and a quote that a JSON text never holds (to_json escapes every
 * control character): each line is written exactly as the query wrote it, and a newline after it.
 */
const COPY_OPTIONS = "(FORMAT csv, DELIMITER E'\\x02', QUOTE E'\\x01')";

/**
 * Exports from PostgreSQL: a REPEATABLE READ, read-only transaction on a connection of the bulk pool
 * (no statement timeout) gives one snapshot; `COPY (query) TO STDOUT` streams it, with backpressure
 * (constant memory, whatever the table's size). When the lines end the transaction commits and the
 * connection goes back to the pool; when they are destroyed first (the client hung up), the
 * connection's socket is closed at once, which ends the COPY and the session on the server (a
 * session left mid-COPY could not be reused, and a polite close would wait for the COPY to end).
 */
export async function exportPlantsPostgres(pool: pg.Pool, { tag }: ExportOptions): Promise<PlantExport> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw translateError(error);
  }
  const ignore = () => {};
  client.on('error', ignore);
  let cursor: string;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    for (const setting of EXPORT_SETTINGS) await client.query(setting);
    cursor = await snapshotCursor(client);
  } catch (error) {
    client.release(true);
    client.off('error', ignore);
    throw translateError(error);
  }
  const lines = client.query(copyTo(`COPY (${exportPlantsSql(tag)}) TO STDOUT ${COPY_OPTIONS}`));
  // The COPY's own failure after its reader gave up (the connection closed under it) reports to nobody.
  lines.on('error', ignore);
  let ended = false;
  lines.once('end', () => {
    ended = true;
  });
  lines.once('close', () => {
    if (ended) {
      client.query('COMMIT').then(
        () => client.release(),
        (error: Error) => client.release(error),
      );
    } else {
      // Mid-COPY: the server keeps writing until its socket fails.
      (lines as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
      client.release(true);
    }
    client.off('error', ignore);
  });
  return { cursor, lines };
}

/** Lines fetched per statement on the embedded database. */
const PGLITE_FETCH_ROWS = 2_000;

/**
 * Exports from the embedded database: one transaction (PGlite's one session, so one snapshot by
 * construction) with a cursor, FETCHed PGLITE_FETCH_ROWS lines at a time as the reader asks for them.
 * PGlite runs one transaction at a time: other requests wait while an export is read, and go on when
 * its lines end or are destroyed (a client that hangs up releases it at once).
 */
export async function exportPlantsPGlite(pglite: PGlite, { tag }: ExportOptions): Promise<PlantExport> {
  let finish = () => {};
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  let open: (value: { tx: Transaction; cursor: string }) => void = () => {};
  let fail: (error: unknown) => void = () => {};
  const opened = new Promise<{ tx: Transaction; cursor: string }>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  const done = pglite
    .transaction(async (tx) => {
      for (const setting of EXPORT_SETTINGS) await tx.query(setting);
      const cursor = await snapshotCursor(tx);
      await tx.query(`DECLARE plant_export NO SCROLL CURSOR FOR ${exportPlantsSql(tag)}`);
      open({ tx, cursor });
      await finished;
      // Read only: ending it either way changes nothing; a rollback does not wait for a commit.
      await tx.rollback();
    })
    .catch((error: unknown) => fail(translateError(error)));
  const { tx, cursor } = await opened;
  const lines = new Readable({
    read() {
      tx.query<{ doc: string }>(`FETCH ${PGLITE_FETCH_ROWS} FROM plant_export`).then(
        ({ rows }: { rows: { doc: string }[] }) => {
          if (rows.length === 0) this.push(null);
          else this.push(`${rows.map((row) => row.doc).join('\n')}\n`);
        },
        (error: unknown) => this.destroy(translateError(error) as Error),
      );
    },
    destroy(error, callback) {
      finish();
      void done.then(() => callback(error));
    },
  });
  return { cursor, lines };
}

/** The feed's cursor in the transaction's snapshot (see currentEventCursor). */
async function snapshotCursor(sql: { query<TRow>(text: string): Promise<{ rows: TRow[] }> }): Promise<string> {
  const { rows } = await sql.query<{ txid: string }>(CURRENT_CURSOR_SQL);
  const [row] = rows;
  if (row === undefined) throw new Error('no snapshot');
  return formatCursor({ txid: BigInt(row.txid), seq: 0n });
}
