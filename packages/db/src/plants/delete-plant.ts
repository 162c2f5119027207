import type { AuditActor } from '../audit/audit-records.js';
import { actorParameters } from '../audit/audit-sql.js';
import { translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';
import { findPlantRows } from './find-plant.js';
import { fanOutDue, NEXT_EVENT_SEQ, orderedEventIdSql, plantEnvelopeJson } from './plant-json.js';

/**
 * Deletes a plant, one statement (one transaction): only while it has one of the versions `$6`
 * names (comma-separated; null: any), with its plant.deleted event (the plant as it was, with the
 * deletion's own version, drawn from the same sequence: above every version the plant had, so a
 * mirror applies an event only when its version is above the one it holds, deletes included; the
 * envelope is also the body, as for updates) and who deleted it in the audit
 * log. A delete that found nothing records nothing. The audit event goes to the actor's team's log
 * (plants are one shared catalogue; the log shows which team deleted it). `$2..$5` are the actor
 * (kind, name, team, client address); the team whose log shows it is the actor's, or for the
 * command line the plant's creating team. `$7` the request's traceparent.
 */
export const DELETE_PLANT_SQL = `WITH deleted AS (
  DELETE FROM public.plants
  WHERE id = $1::text::bigint AND ($6::text IS NULL OR version = ANY (string_to_array($6::text, ',')::bigint[]))
  RETURNING id, name, tag, created_by_team, nextval('public.plant_versions') AS deletion_version
), events AS (
  INSERT INTO public.webhook_events (id, seq, plant_id, type, version, payload, envelope, trace_parent, fanned_out_at)
  SELECT ${orderedEventIdSql('gone.seq')}, gone.seq, gone.id, 'plant.deleted', gone.version,
    body.doc, body.doc, $7::text, ${fanOutDue('plant.deleted')}
  FROM (SELECT deleted.id, deleted.name, deleted.tag, deleted.deletion_version AS version,
      ${NEXT_EVENT_SEQ} AS seq FROM deleted) AS gone
  CROSS JOIN LATERAL (SELECT ${plantEnvelopeJson('plant.deleted', 'gone')} AS doc) AS body
  RETURNING fanned_out_at IS NULL AS queued
), audited AS (
  INSERT INTO public.audit_events (team, actor_kind, actor_name, actor_team, action, target, client_address)
  SELECT coalesce($4::varchar, deleted.created_by_team, 'default'), $2::varchar, $3::varchar, $4::varchar,
    'plant.deleted', deleted.id::text, $5::text
  FROM deleted
)
SELECT id::text AS id, (SELECT count(*) FILTER (WHERE queued) FROM events)::int AS events FROM deleted`;

export interface DeletePlantOptions {
  /** If-Match: the versions the plant must have; absent: any. */
  readonly ifMatch?: readonly bigint[] | undefined;
  readonly traceParent?: string | undefined;
}

/** What became of a delete: done, no such plant, or another version than If-Match named (which it has). */
export type DeletePlantResult =
  | { readonly outcome: 'deleted'; readonly events: number }
  | { readonly outcome: 'missing' }
  | { readonly outcome: 'mismatch'; readonly version: bigint };

/** Deletes the plant with this id (see DELETE_PLANT_SQL). Committed when it resolves. */
export async function deletePlant(
  sql: SqlRunner,
  id: bigint,
  actor: AuditActor,
  options: DeletePlantOptions = {},
): Promise<DeletePlantResult> {
  try {
    const { rows } = await sql.query<{ id: string; events: number }>(DELETE_PLANT_SQL, [
      id.toString(),
      ...actorParameters(actor),
      options.ifMatch === undefined ? null : options.ifMatch.join(','),
      options.traceParent ?? null,
    ]);
    const [row] = rows;
    if (row !== undefined) return { outcome: 'deleted', events: row.events };
    if (options.ifMatch === undefined) return { outcome: 'missing' };
    // Not deleted under a precondition: absent, or there with another version.
    const stored = (await findPlantRows(sql, [id])).get(id);
    return stored === undefined ? { outcome: 'missing' } : { outcome: 'mismatch', version: stored.version };
  } catch (error) {
    throw translateError(error);
  }
}
