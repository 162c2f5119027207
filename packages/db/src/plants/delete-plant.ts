import type { AuditActor } from '../audit/audit-records.js';
import { actorParameters } from '../audit/audit-sql.js';
import { translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';

/**
 * Deletes a plant and records who did in the audit log, one statement (one transaction): a delete
 * that found nothing records nothing. The event goes to the actor's team's log (plants are one
 * shared catalogue; the log shows which team deleted it). `$2..$5` are the actor (kind, name,
 * team, client address); the team whose log shows it is the actor's, or for the command line the
 * plant's creating team.
 */
export const DELETE_PLANT_SQL = `WITH deleted AS (
  DELETE FROM public.plants WHERE id = $1::text::bigint RETURNING id, created_by_team
), audited AS (
  INSERT INTO public.audit_events (team, actor_kind, actor_name, actor_team, action, target, client_address)
  SELECT coalesce($4::varchar, deleted.created_by_team, 'default'), $2::varchar, $3::varchar, $4::varchar,
    'plant.deleted', deleted.id::text, $5::text
  FROM deleted
)
SELECT id::text AS id FROM deleted`;

/** Deletes the plant with this id; false when there was none. Committed when it resolves. */
export async function deletePlant(sql: SqlRunner, id: bigint, actor: AuditActor): Promise<boolean> {
  try {
    const { rows } = await sql.query<{ id: string }>(DELETE_PLANT_SQL, [id.toString(), ...actorParameters(actor)]);
    return rows.length > 0;
  } catch (error) {
    throw translateError(error);
  }
}
