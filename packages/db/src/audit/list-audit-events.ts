import { AUDIT_ACTIONS, type AuditAction } from '@plant-store/schema';
import { translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';
import type { AuditEventPage, AuditEventRecord } from './audit-records.js';

export interface ListAuditEventsQuery {
  readonly limit: number;
  /** Only events with a greater id (the previous page's last). */
  readonly after?: bigint | undefined;
  /** Only this team's log; absent: every team's (platform:admin). */
  readonly team?: string | undefined;
}

const AUDIT_EVENT_COLUMNS = `id::text AS id, occurred_at AS "occurredAt", team, actor_kind AS "actorKind",
  actor_name AS "actorName", actor_team AS "actorTeam", action, target, client_address AS "clientAddress", details`;

/**
 * A page of one team's audit log in ascending id order (the order events were written), along the
 * (team, id) index: `limit + 1` rows at most, to know whether another page follows. (Ordered by the
 * table's id, not the text the select list names `id`.)
 */
export const LIST_TEAM_AUDIT_EVENTS_SQL = `SELECT ${AUDIT_EVENT_COLUMNS} FROM public.audit_events
WHERE audit_events.team = $1::varchar AND audit_events.id > $2::text::bigint
ORDER BY audit_events.id
LIMIT $3::int`;

/** The same for every team's log (platform:admin), along the primary key. */
export const LIST_ALL_AUDIT_EVENTS_SQL = `SELECT ${AUDIT_EVENT_COLUMNS} FROM public.audit_events
WHERE audit_events.id > $2::text::bigint AND $1::varchar IS NULL
ORDER BY audit_events.id
LIMIT $3::int`;

interface AuditEventRow {
  readonly id: string;
  readonly occurredAt: Date;
  readonly team: string;
  readonly actorKind: string;
  readonly actorName: string;
  readonly actorTeam: string | null;
  readonly action: string;
  readonly target: string;
  readonly clientAddress: string | null;
  readonly details: string | null;
}

/** The lowest int64: `after` when no page came before. */
const BEFORE_EVERY_ID = '-9223372036854775808';

export async function listAuditEvents(sql: SqlRunner, query: ListAuditEventsQuery): Promise<AuditEventPage> {
  try {
    const text = query.team === undefined ? LIST_ALL_AUDIT_EVENTS_SQL : LIST_TEAM_AUDIT_EVENTS_SQL;
    const { rows } = await sql.query<AuditEventRow>(text, [
      query.team ?? null,
      query.after?.toString() ?? BEFORE_EVERY_ID,
      query.limit + 1,
    ]);
    return { events: rows.slice(0, query.limit).map(toAuditEventRecord), hasMore: rows.length > query.limit };
  } catch (error) {
    throw translateError(error);
  }
}

const ACTIONS: ReadonlySet<string> = new Set(AUDIT_ACTIONS);

function toAuditEventRecord(row: AuditEventRow): AuditEventRecord {
  if (!ACTIONS.has(row.action)) throw new Error(`unknown audit action ${JSON.stringify(row.action)}`);
  return {
    id: BigInt(row.id),
    occurredAt: row.occurredAt,
    team: row.team,
    actor: { kind: row.actorKind === 'cli' ? 'cli' : 'token', name: row.actorName, team: row.actorTeam },
    action: row.action as AuditAction,
    target: row.target,
    clientAddress: row.clientAddress,
    details: row.details === null ? null : (JSON.parse(row.details) as Record<string, unknown>),
  };
}

/** The oldest audit events first, along the occurred_at index; rows another replica is deleting are skipped. */
export const DELETE_OLD_AUDIT_EVENTS_SQL = `WITH gone AS (
  DELETE FROM public.audit_events
  WHERE id IN (
    SELECT old.id FROM public.audit_events AS old
    WHERE old.occurred_at < now() - $1::bigint * interval '1 millisecond'
    ORDER BY old.occurred_at
    LIMIT $2::int
    FOR UPDATE SKIP LOCKED
  )
  RETURNING 1
)
SELECT count(*)::int AS deleted FROM gone`;

/** One batch of the audit log's retention: at most `batchSize` events older than `olderThanMs` (database time). */
export async function deleteOldAuditEvents(
  sql: SqlRunner,
  options: { readonly olderThanMs: number; readonly batchSize: number },
): Promise<number> {
  try {
    const { rows } = await sql.query<{ deleted: number }>(DELETE_OLD_AUDIT_EVENTS_SQL, [
      Math.floor(options.olderThanMs),
      options.batchSize,
    ]);
    return rows[0]?.deleted ?? 0;
  } catch (error) {
    throw translateError(error);
  }
}
