import { DatabaseUnavailableError } from '../errors.js';
import { translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';

export interface FanOutOptions {
  /**
   * Most deliveries one call writes: the events taken are as many as fit with every
   * subscription (at least one), so that a statement's size stays bounded at 100 subscriptions.
   */
  readonly maxDeliveries: number;
}

export interface FanOutResult {
  /** Events fanned out by this call. */
  readonly events: number;
  /** Deliveries it wrote (none for a pair that had one already). */
  readonly deliveries: number;
  /**
   * The same deliveries by receiver (receiverOrigin of the subscription's URL): what a dispatcher
   * paces its fan-out by, per receiver.
   */
  readonly deliveriesByReceiver: ReadonlyMap<string, number>;
}

/**
 * Takes the oldest events not fanned out yet, along the partial index of them (`FOR UPDATE SKIP
 * LOCKED`: events another dispatcher is fanning out are skipped, not waited for), writes one
 * pending delivery, due now, per enabled subscription that takes the event's type and existed when
 * the event was written (`created_at`, both stamped by the database's clock; a disabled one gets
 * none of what happens while it is disabled: it catches up from the feed), with the subscription's receiver (what
 * claims scan by), and stamps the events fanned out: one
 * statement, one transaction, so an event is fanned out wholly or not at all. A pair that has a
 * delivery already (an event a previous version's create statement fanned out during a rolling
 * deploy) is skipped by the unique (event_id, subscription_id).
 *
 * A subscription registered after the event was written gets none of it; one deleted before
 * gets none either (it is not in the snapshot), and one deleted while this runs makes the
 * statement fail its foreign key check and write nothing: it is run again (see fanOutEvents).
 */
export const FAN_OUT_EVENTS_SQL = `WITH batch AS (
  SELECT events.id, events.type, events.created_at
  FROM public.webhook_events AS events
  WHERE events.fanned_out_at IS NULL
  ORDER BY events.created_at, events.id
  LIMIT greatest(1, $1::int / greatest(1, (SELECT count(*) FROM public.webhook_subscriptions)::int))
  FOR UPDATE SKIP LOCKED
), deliveries AS (
  INSERT INTO public.webhook_deliveries (event_id, subscription_id, status, next_attempt_at, receiver)
  SELECT batch.id, subscriptions.id, 'pending', now(), subscriptions.receiver
  FROM batch
  JOIN public.webhook_subscriptions AS subscriptions ON subscriptions.created_at <= batch.created_at
    AND subscriptions.enabled AND batch.type = ANY (subscriptions.event_types)
  ON CONFLICT (event_id, subscription_id) DO NOTHING
  RETURNING receiver
), by_receiver AS (
  SELECT deliveries.receiver AS origin, count(*)::int AS deliveries FROM deliveries GROUP BY 1
), fanned AS (
  UPDATE public.webhook_events AS events
  SET fanned_out_at = now()
  FROM batch
  WHERE events.id = batch.id
  RETURNING 1
)
SELECT (SELECT count(*) FROM fanned)::int AS events, (SELECT count(*) FROM deliveries)::int AS deliveries,
  (SELECT coalesce(array_agg(origin), '{}') FROM by_receiver) AS receivers,
  (SELECT coalesce(array_agg(deliveries), '{}') FROM by_receiver) AS receiver_deliveries`;

/** Every receiver (receiverOrigin of a subscription's URL) with a subscription, once each. */
export const WEBHOOK_RECEIVERS_SQL = `SELECT DISTINCT subscriptions.receiver AS origin
FROM public.webhook_subscriptions AS subscriptions`;

/**
 * The receivers that have subscriptions: a dispatcher whose fan-out waits for the receivers it
 * writes for asks which others exist (new subscriptions), so that none waits behind busy ones.
 */
export async function webhookReceivers(sql: SqlRunner): Promise<string[]> {
  try {
    const { rows } = await sql.query<{ origin: string }>(WEBHOOK_RECEIVERS_SQL, []);
    return rows.map((row) => row.origin);
  } catch (error) {
    throw translateError(error);
  }
}

/** The statement's one row. */
interface FanOutRow {
  readonly events: number;
  readonly deliveries: number;
  readonly receivers: readonly string[];
  readonly receiver_deliveries: readonly number[];
}

/** PostgreSQL's foreign_key_violation. */
const FOREIGN_KEY_VIOLATION = '23503';
/** Runs of the statement after subscriptions vanished under it, before giving up for this round. */
const MAX_ATTEMPTS = 3;

/**
 * Fans out one batch of webhook events (see FAN_OUT_EVENTS_SQL): every dispatcher calls it
 * before it claims deliveries, so that an event written by any replica, even one that does not
 * dispatch, is fanned out by whichever dispatcher gets to it first. Through the driver: it runs
 * after every create that wrote events.
 */
export async function fanOutEvents(sql: SqlRunner, options: FanOutOptions): Promise<FanOutResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      const { rows } = await sql.query<FanOutRow>(FAN_OUT_EVENTS_SQL, [Math.max(1, Math.floor(options.maxDeliveries))]);
      const [row] = rows;
      if (row === undefined) return { events: 0, deliveries: 0, deliveriesByReceiver: new Map() };
      const deliveriesByReceiver = new Map(
        row.receivers.map((origin, index) => [origin, row.receiver_deliveries[index] ?? 0] as const),
      );
      return { events: row.events, deliveries: row.deliveries, deliveriesByReceiver };
    } catch (error) {
      // A subscription deleted after the statement's snapshot, before its foreign key check: it
      // wrote nothing. Again, on a snapshot without it.
      if (!isForeignKeyViolation(error)) throw translateError(error);
      // Deleted under it again and again: transient; the dispatcher's next round finds them gone.
      if (attempt >= MAX_ATTEMPTS) throw new DatabaseUnavailableError({ cause: error });
    }
  }
}

function isForeignKeyViolation(error: unknown): boolean {
  return error instanceof Error && 'code' in error && error.code === FOREIGN_KEY_VIOLATION;
}
