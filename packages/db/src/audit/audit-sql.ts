import type { AuditAction } from '@plant-store/schema';
import { Prisma } from '../generated/prisma/client.js';
import type { AuditActor } from './audit-records.js';

/** The audit log's columns in the order the steps below give their values. */
export const AUDIT_COLUMNS = Prisma.raw(
  'team, actor_kind, actor_name, actor_team, action, target, client_address, details',
);

/**
 * The values of one audit event after its team (which the acted-on row usually gives): the actor,
 * the action, the target and the details, each cast so that the statement plans alike on both
 * engines. Used inside an `INSERT INTO public.audit_events (AUDIT_COLUMNS) SELECT <team>, ...`
 * step of the action's own statement.
 */
export function auditValues(
  actor: AuditActor,
  action: AuditAction,
  target: Prisma.Sql,
  details: Readonly<Record<string, unknown>> | null,
): Prisma.Sql {
  return Prisma.sql`${actor.kind}::varchar, ${actor.name}::varchar, ${actor.team}::varchar, ${action}::varchar,
    ${target}, ${actor.clientAddress}::text, ${details === null ? null : JSON.stringify(details)}::text`;
}

/**
 * The actor's values for a statement sent straight to the driver, whose values are positional:
 * kind, name, team, client address.
 */
export function actorParameters(actor: AuditActor): [string, string, string | null, string | null] {
  return [actor.kind, actor.name, actor.team, actor.clientAddress];
}
