import type { NewPlant } from '@plant-store/schema';
import type { AuditActor } from '../audit/audit-records.js';
import { actorParameters } from '../audit/audit-sql.js';
import { ImportRejectedError } from '../errors.js';
import {
  fanOutDue,
  NEXT_EVENT_SEQ,
  NOW_RFC3339,
  orderedEventIdPrefixSql,
  orderedEventIdSql,
  plantJsonOpen,
} from './plant-json.js';

/** One line of an import, validated (`value`, a NewPlant), with its 1-based line number in the stream. */
export interface ImportLine {
  readonly line: number;
  readonly value: NewPlant;
}

export interface ImportOptions {
  /** Who imports: the audit log's actor, and the team the new plants are created by. */
  readonly actor: AuditActor;
  /** The W3C traceparent of the importing request, kept with every plant.created event it writes. */
  readonly traceParent?: string | undefined;
  /** Aborted: the import stops and stores nothing (the client hung up). */
  readonly signal?: AbortSignal | undefined;
}

/** What an import did, all of it committed when this is answered. */
export interface ImportResult {
  /** Lines read (every line that held a plant). */
  readonly lines: number;
  /** Plants it created (each with its plant.created event). */
  readonly stored: number;
  /** Distinct ids already stored exactly as their lines say: counted as stored, written again never. */
  readonly alreadyStored: number;
  /** Events queued for the webhook fan-out (0 when no subscription takes plant.created). */
  readonly events: number;
}

/**
 * The staging table's columns, as both engines fill them: the line number, then the plant. A temporary
 * table: never logged, never seen by another session, dropped with the import.
 */
export function createStagingTableSql(table: string, onCommitDrop: boolean): string {
  return `CREATE TEMPORARY TABLE ${table} (line bigint NOT NULL, id bigint NOT NULL, name text NOT NULL, tag text)${
    onCommitDrop ? ' ON COMMIT DROP' : ''
  }`;
}

/** How the merge reads its staging table (see mergeImportSql). */
export interface MergeShape {
  /**
   * Every staged id differs from every other (the service saw them strictly ascending): no line can
   * repeat another, so the statement skips looking for repeats (a sort and a window over every line).
   */
  readonly uniqueIds: boolean;
  /**
   * `ON CONFLICT (id) DO NOTHING` on the plants' insert: only after a plain insert met a unique
   * violation (another session created one of the ids after the statement's snapshot), to run again.
   */
  readonly onConflict: boolean;
}

/**
 * The import's one statement over its staging table: checks every rule that needs more than one line
 * or the stored plants, and when none is broken, inserts the new plants with their plant.created events
 * and the import's audit event, all in the statement's transaction.
 * - `repeated`: the first line that repeats an earlier line's id with other content, and that line
 *   (none when `uniqueIds`).
 * - `conflict`: the first line whose id is stored with other content.
 * - `inserted`: the first line of each id not stored yet, in id order (versions from the
 *   plant_versions sequence as a create takes them, ascending with the ids), only when neither rule
 *   is broken, and not in `stored` (the ids found stored, one read of the primary key a line). A plain
 *   insert, not ON CONFLICT's speculative insertion row by row: a create of one of these ids committed
 *   after the statement's snapshot makes it fail with a unique violation, and the caller runs it again
 *   with `onConflict` (see concurrentConflictSql for what it then checks).
 * - `events`: plant.created for each, the payload and envelope a create writes, the timestamp read
 *   once for the statement (as a create's statement does), queued for the fan-out only while a
 *   subscription takes plant.created (see fanOutDue). Their ids are `msg_` and a UUIDv7 made of the
 *   statement's clock and the event's `seq` (orderedEventIdSql): unique as `seq` is, and ascending,
 *   so a million of them go to the right-hand edge of the primary key's index rather than to a
 *   random page each.
 * $1 the creating team, $2 the traceparent, $3-$6 the actor (kind, name, team, address).
 */
export function mergeImportSql(table: string, shape: MergeShape = { uniqueIds: false, onConflict: false }): string {
  // Unique ids: the staging table is read as it is (the planner knows its size), as `firsts`.
  const firsts = shape.uniqueIds ? `${table} AS firsts` : 'firsts';
  const firstsSql = shape.uniqueIds
    ? 'repeated AS (SELECT NULL::bigint AS line, NULL::bigint AS first_line, NULL::bigint AS id WHERE false)'
    : `ranked AS MATERIALIZED (
  SELECT line, id, name, tag,
    first_value(line) OVER same_id AS first_line,
    first_value(name) OVER same_id AS first_name,
    first_value(tag) OVER same_id AS first_tag
  FROM ${table}
  WINDOW same_id AS (PARTITION BY id ORDER BY line)
), repeated AS (
  SELECT line, first_line, id FROM ranked
  WHERE line <> first_line AND (name <> first_name OR tag IS DISTINCT FROM first_tag)
  ORDER BY line LIMIT 1
), firsts AS MATERIALIZED (
  SELECT line, id, name, tag FROM ranked WHERE line = first_line
)`;
  return `WITH ${firstsSql}, stored AS MATERIALIZED (
  SELECT firsts.line, firsts.id, (plants.name = firsts.name AND plants.tag IS NOT DISTINCT FROM firsts.tag) AS same
  FROM ${firsts} JOIN public.plants AS plants ON plants.id = firsts.id
), conflict AS (
  SELECT line, id FROM stored WHERE NOT same ORDER BY line LIMIT 1
), inserted AS (
  INSERT INTO public.plants (id, name, tag, created_by_team)
  SELECT firsts.id, firsts.name, firsts.tag, $1::varchar FROM ${firsts}
  WHERE NOT EXISTS (SELECT FROM repeated) AND NOT EXISTS (SELECT FROM conflict)
    AND NOT EXISTS (SELECT FROM stored WHERE stored.id = firsts.id)
  ORDER BY firsts.id${shape.onConflict ? ' ON CONFLICT (id) DO NOTHING' : ''}
  RETURNING id, name, tag, version
), numbered AS (
  SELECT inserted.id, inserted.version, ${NEXT_EVENT_SEQ} AS seq,
    ${plantJsonOpen('inserted')} AS plant
  FROM inserted
  ORDER BY inserted.id
), clock AS (
  SELECT ${NOW_RFC3339} AS timestamp, ${orderedEventIdPrefixSql()} AS id_prefix
), events AS (
  INSERT INTO public.webhook_events (id, seq, plant_id, type, version, payload, envelope, trace_parent, fanned_out_at)
  SELECT ${orderedEventIdSql('numbered.seq', 'clock.id_prefix')}, numbered.seq, numbered.id, 'plant.created', numbered.version,
    numbered.plant || '}',
    '{"type":"plant.created","timestamp":"' || clock.timestamp || '","data":' || numbered.plant || ',"version":' || numbered.version::text || '}}',
    $2::text, ${fanOutDue('plant.created')}
  FROM numbered CROSS JOIN clock
  RETURNING fanned_out_at IS NULL AS queued
), counts AS (
  SELECT (SELECT count(*) FROM ${table}) AS lines,
    (SELECT count(*) FROM inserted) AS stored,
    (SELECT count(*) FROM stored WHERE same) AS already_stored,
    (SELECT count(*) FROM ${firsts}) AS ids
), audited AS (
  INSERT INTO public.audit_events (team, actor_kind, actor_name, actor_team, action, target, client_address, details)
  SELECT coalesce($5::varchar, 'default'), $3::varchar, $4::varchar, $5::varchar, 'plants.imported', 'plants', $6::text,
    json_build_object('lines', counts.lines, 'stored', counts.stored, 'alreadyStored', counts.already_stored)::text
  FROM counts
  WHERE NOT EXISTS (SELECT FROM repeated) AND NOT EXISTS (SELECT FROM conflict)
)
SELECT (SELECT line::text FROM repeated) AS repeated_line, (SELECT first_line::text FROM repeated) AS first_line,
  (SELECT id::text FROM repeated) AS repeated_id,
  (SELECT line::text FROM conflict) AS conflict_line, (SELECT id::text FROM conflict) AS conflict_id,
  counts.lines::text AS lines, counts.stored::text AS stored, counts.already_stored::text AS already_stored,
  counts.ids::text AS ids, (SELECT count(*) FILTER (WHERE queued) FROM events)::int AS events
FROM counts`;
}

/**
 * After the merge inserted fewer ids than were new to it (another session created some of them in
 * the meantime): the first line whose id is now stored with other content, read in a new snapshot
 * (PostgreSQL's READ COMMITTED). None: those creates were the same plants, stored all the same.
 */
export function concurrentConflictSql(table: string): string {
  return `SELECT staged.line::text AS line, staged.id::text AS id FROM ${table} AS staged
  JOIN public.plants AS plants ON plants.id = staged.id
  WHERE plants.name <> staged.name OR plants.tag IS DISTINCT FROM staged.tag
  ORDER BY staged.line LIMIT 1`;
}

export interface MergeRow {
  readonly repeated_line: string | null;
  readonly first_line: string | null;
  readonly repeated_id: string | null;
  readonly conflict_line: string | null;
  readonly conflict_id: string | null;
  readonly lines: string;
  readonly stored: string;
  readonly already_stored: string;
  readonly ids: string;
  readonly events: number;
}

/** The merge statement's values (see mergeImportSql). */
export function mergeParameters(options: ImportOptions): unknown[] {
  const [kind, name, team, address] = actorParameters(options.actor);
  return [team ?? null, options.traceParent ?? null, kind, name, team, address];
}

/**
 * The merge's answer: throws ImportRejectedError for a broken rule (the caller rolls back), else the
 * counts. `concurrentNew` are ids another session stored meanwhile with this import's content.
 */
export function mergeOutcome(row: MergeRow | undefined): ImportResult & { readonly unaccounted: number } {
  if (row === undefined) throw new Error('the import statement returned no row');
  if (row.repeated_line !== null) {
    throw ImportRejectedError.repeatedId(
      Number(row.repeated_line),
      Number(row.first_line),
      BigInt(row.repeated_id ?? 0),
    );
  }
  if (row.conflict_line !== null) {
    throw ImportRejectedError.storedConflict(Number(row.conflict_line), BigInt(row.conflict_id ?? 0));
  }
  const stored = Number(row.stored);
  const alreadyStored = Number(row.already_stored);
  return {
    lines: Number(row.lines),
    stored,
    alreadyStored,
    events: row.events,
    unaccounted: Number(row.ids) - stored - alreadyStored,
  };
}

/**
 * Whether the ids of an import's lines, as read, were strictly ascending (an export's are, and
 * most catalogues'): then no id repeats and the merge needs no search for repeats.
 */
export class IdOrder {
  #last: bigint | undefined;
  #ascending = true;

  get ascending(): boolean {
    return this.#ascending;
  }

  see(id: bigint): void {
    if (this.#ascending && this.#last !== undefined && id <= this.#last) this.#ascending = false;
    this.#last = id;
  }
}

/** How many lines go into the staging table per statement on the embedded database. */
export const STAGING_BATCH_ROWS = 2_000;
