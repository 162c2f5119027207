import type { NewPlant } from '@plant-store/schema';
import type { AuditActor } from '../audit/audit-records.js';
import { actorParameters } from '../audit/audit-sql.js';
import { ImportRejectedError } from '../errors.js';
import { fanOutDue, plantEnvelopeJson, plantJson } from './plant-json.js';

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

/**
 * The import's one statement over its staging table: checks every rule that needs more than one line
 * or the stored plants, and when none is broken, inserts the new plants with their plant.created events
 * and the import's audit event, all in the statement's transaction.
 * - `repeated`: the first line that repeats an earlier line's id with other content, and that line.
 * - `conflict`: the first line whose id is stored with other content.
 * - `inserted`: the first line of each id not stored yet, in id order (versions from the
 *   plant_versions sequence as a create takes them, ascending with the ids), only when neither rule
 *   is broken. ON CONFLICT: a create committed meanwhile by another session is left as it is (the
 *   caller checks for those: see CONCURRENT_CONFLICT_SQL).
 * - `events`: plant.created for each, the payload and envelope a create writes; queued for the fan-out
 *   only while a subscription takes plant.created (see fanOutDue).
 * $1 the creating team, $2 the traceparent, $3-$6 the actor (kind, name, team, address).
 */
export function mergeImportSql(table: string): string {
  return `WITH ranked AS MATERIALIZED (
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
), stored AS MATERIALIZED (
  SELECT firsts.line, firsts.id, (plants.name = firsts.name AND plants.tag IS NOT DISTINCT FROM firsts.tag) AS same
  FROM firsts JOIN public.plants AS plants ON plants.id = firsts.id
), conflict AS (
  SELECT line, id FROM stored WHERE NOT same ORDER BY line LIMIT 1
), inserted AS (
  INSERT INTO public.plants (id, name, tag, created_by_team)
  SELECT firsts.id, firsts.name, firsts.tag, $1::varchar FROM firsts
  WHERE NOT EXISTS (SELECT FROM repeated) AND NOT EXISTS (SELECT FROM conflict)
    AND NOT EXISTS (SELECT FROM public.plants AS plants WHERE plants.id = firsts.id)
  ORDER BY firsts.id
  ON CONFLICT (id) DO NOTHING
  RETURNING id, name, tag, version
), events AS (
  INSERT INTO public.webhook_events (plant_id, type, version, payload, envelope, trace_parent, fanned_out_at)
  SELECT inserted.id, 'plant.created', inserted.version, ${plantJson('inserted')},
    ${plantEnvelopeJson('plant.created', 'inserted')}, $2::text, ${fanOutDue('plant.created')}
  FROM inserted
  ORDER BY inserted.id
  RETURNING fanned_out_at IS NULL AS queued
), counts AS (
  SELECT (SELECT count(*) FROM ${table}) AS lines,
    (SELECT count(*) FROM inserted) AS stored,
    (SELECT count(*) FROM stored WHERE same) AS already_stored,
    (SELECT count(*) FROM firsts) AS ids
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

/** How many lines go into the staging table per statement on the embedded database. */
export const STAGING_BATCH_ROWS = 2_000;
