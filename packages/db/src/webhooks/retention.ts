import { translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';

export interface RetentionOptions {
  /** Finished deliveries (and events without deliveries) older than this go. */
  readonly olderThanMs: number;
  /** Most rows of each kind one call deletes. */
  readonly batchSize: number;
}

export interface RetentionResult {
  /** Delivered or failed deliveries deleted (their attempts with them). */
  readonly deliveries: number;
  /** Events deleted: older than the period, and no delivery of theirs left. */
  readonly events: number;
}

/**
 * The oldest finished deliveries first, along the partial (created_at) index of finished ones;
 * a pending delivery (due, retrying, or resent) is never touched. Rows another replica's job is
 * deleting are skipped, not waited for. Attempts go with their delivery (ON DELETE CASCADE).
 */
export const DELETE_OLD_DELIVERIES_SQL = `WITH gone AS (
  DELETE FROM public.webhook_deliveries
  WHERE id IN (
    SELECT old.id FROM public.webhook_deliveries AS old
    WHERE old.status <> 'pending'
      AND old.created_at < now() - $1::bigint * interval '1 millisecond'
    ORDER BY old.created_at
    LIMIT $2::int
    FOR UPDATE SKIP LOCKED
  )
  RETURNING 1
)
SELECT count(*)::int AS deleted FROM gone`;

/**
 * The oldest events first, in the feed's order (along its index), each only once it is fanned out
 * (an event still waiting for its deliveries is never lost, however late the dispatchers are) and
 * none of its deliveries is left (the deliveries' foreign key refuses the rest, should one appear
 * meanwhile: that batch fails and the next run tries again). The feed's horizon moves up to the
 * last event deleted: a cursor before it answers 410.
 */
export const DELETE_OLD_EVENTS_SQL = `WITH gone AS (
  DELETE FROM public.webhook_events
  WHERE id IN (
    SELECT old.id FROM public.webhook_events AS old
    WHERE old.created_at < now() - $1::bigint * interval '1 millisecond'
      AND old.fanned_out_at IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM public.webhook_deliveries AS left_over WHERE left_over.event_id = old.id)
    ORDER BY old.txid, old.seq
    LIMIT $2::int
    FOR UPDATE SKIP LOCKED
  )
  RETURNING txid, seq
), last_gone AS (
  SELECT gone.txid, gone.seq FROM gone ORDER BY gone.txid DESC, gone.seq DESC LIMIT 1
), horizon AS (
  UPDATE public.event_feed_horizon AS horizon
  SET txid = last_gone.txid, seq = last_gone.seq
  FROM last_gone
  WHERE ROW(last_gone.txid, last_gone.seq) > ROW(horizon.txid, horizon.seq)
)
SELECT count(*)::int AS deleted FROM gone`;

/**
 * One batch of the retention job: at most `batchSize` finished deliveries older than
 * `olderThanMs` (database time), then at most `batchSize` events as old with no delivery left.
 * Safe to run from every replica at once: each row goes once, and no statement waits on another.
 */
export async function deleteOldWebhookData(sql: SqlRunner, options: RetentionOptions): Promise<RetentionResult> {
  const values = [Math.floor(options.olderThanMs), options.batchSize];
  try {
    const deliveries = await sql.query<{ deleted: number }>(DELETE_OLD_DELIVERIES_SQL, values);
    const events = await sql.query<{ deleted: number }>(DELETE_OLD_EVENTS_SQL, values);
    return { deliveries: deliveries.rows[0]?.deleted ?? 0, events: events.rows[0]?.deleted ?? 0 };
  } catch (error) {
    throw translateError(error);
  }
}
