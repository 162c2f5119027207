import type { AuditEventRecord } from '@plant-store/db';
import type { AuditEvent } from '@plant-store/schema';

/**
 * An audit event as the wire contract spells it: the date as an RFC 3339 string, fields the
 * record holds as null left out (the actor's team for the command line, the address, the
 * details). Typed with the schema package's type, so a shape that drifts does not compile.
 */
export function toAuditEvent(record: AuditEventRecord): AuditEvent {
  const { actor } = record;
  return {
    id: record.id,
    occurredAt: record.occurredAt.toISOString(),
    team: record.team,
    actor: { kind: actor.kind, name: actor.name, ...(actor.team === null ? {} : { team: actor.team }) },
    action: record.action,
    target: record.target,
    ...(record.clientAddress === null ? {} : { clientAddress: record.clientAddress }),
    ...(record.details === null ? {} : { details: { ...record.details } }),
  };
}
