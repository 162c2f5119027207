import { translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';

/** The plant event types the feed lists (a `webhook.test` event is a subscription's own, never in the feed). */
export const FEED_EVENT_TYPES = ['plant.created', 'plant.updated', 'plant.deleted'] as const;
export type FeedEventType = (typeof FEED_EVENT_TYPES)[number];

/**
 * A place in the feed: after the events of the transaction `txid` up to `seq`. Written
 * `<txid>.<seq>` (opaque to callers).
 */
export interface FeedCursor {
  readonly txid: bigint;
  readonly seq: bigint;
}

const CURSOR = /^(\d{1,20})\.(\d{1,19})$/;

export function formatCursor(cursor: FeedCursor): string {
  return `${cursor.txid}.${cursor.seq}`;
}

/** The cursor a `<txid>.<seq>` text names, or null when it names none. */
export function parseCursor(text: string): FeedCursor | null {
  const match = CURSOR.exec(text);
  if (match === null) return null;
  const txid = BigInt(match[1] ?? '');
  const seq = BigInt(match[2] ?? '');
  return txid < 2n ** 64n && seq < 2n ** 63n ? { txid, seq } : null;
}

/** Before every event there is. */
export const FEED_START: FeedCursor = { txid: 0n, seq: 0n };

/**
 * An event of the feed as the contract's JSON item, written by PostgreSQL: the envelope
 * (`{"type","timestamp","data"}`) with the event's cursor and id before its fields.
 */
const ITEM_JSON = `'{"cursor":"' || events.txid::text || '.' || events.seq::text || '","eventId":"' || events.id || '",'
  || substring(events.envelope from 2)`;

/**
 * The feed's order and its guard against the sequence-gap problem of outbox tables. An event's
 * place is (txid, seq): the id of the transaction that wrote it, then a sequence. A page lists only
 * events whose transaction is older than the oldest transaction still running
 * (`pg_snapshot_xmin`): those transactions have all ended, so no event of theirs can still appear,
 * and any event that appears later belongs to a transaction that was running or had not begun,
 * whose id is at least that bound, above every event listed. So a later page never holds an event
 * that committed before one already returned. The price: an event shows once every transaction
 * that began before it has ended (a long transaction, in any database of the server, holds the
 * feed back while it runs).
 */
function feedRows(typed: boolean): string {
  return `SELECT events.txid, events.seq, ${ITEM_JSON} AS doc
  FROM public.webhook_events AS events
  WHERE ${typed ? 'events.type = $4::text AND ' : "events.type <> 'webhook.test' AND "}(events.txid, events.seq) > ($1::text::xid8, $2::text::bigint)
    AND events.txid < (SELECT pg_snapshot_xmin(pg_current_snapshot()))
  ORDER BY ${typed ? 'events.type, ' : ''}events.txid, events.seq
  LIMIT $3::int`;
}

/**
 * A page of the feed as one row (as the plants' pages are): whether the cursor is before what
 * retention kept (`expired`), how many rows were read (`limit + 1` means more follow), the JSON of
 * the first `limit`, and the last one's cursor.
 */
function pageOf(typed: boolean): string {
  return `SELECT
  (SELECT ROW(horizon.txid, horizon.seq) > ROW($1::text::xid8, $2::text::bigint) FROM public.event_feed_horizon AS horizon) AS expired,
  count(*)::int AS rows,
  '[' || coalesce(string_agg(page.doc, ',' ORDER BY page.i) FILTER (WHERE page.i < $3::int), '') || ']' AS json,
  (array_agg(page.txid::text || '.' || page.seq::text ORDER BY page.i DESC) FILTER (WHERE page.i < $3::int))[1] AS last_cursor
FROM (SELECT rows.*, row_number() OVER (ORDER BY rows.txid, rows.seq) AS i FROM (${feedRows(typed)}) AS rows) AS page`;
}

/** A page of every event type: $1 the cursor's txid, $2 its seq (text), $3 limit + 1. */
export const LIST_EVENTS_SQL = pageOf(false);
/** A page of one type, along its index: $4 the type. */
export const LIST_TYPED_EVENTS_SQL = pageOf(true);

/** Where the feed stands now: every event listed so far is before it, every one that shows later after. */
export const CURRENT_CURSOR_SQL = 'SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS txid';

export interface ListEventsQuery {
  readonly limit: number;
  /** After this place; absent: from the oldest event kept. */
  readonly after?: FeedCursor | undefined;
  readonly type?: FeedEventType | undefined;
}

/** A page of the feed, written as the contract's JSON array. */
export type EventPage =
  | {
      readonly expired: false;
      readonly json: string;
      /** The cursor of the page's last event; undefined when the page is empty. */
      readonly lastCursor: string | undefined;
      readonly hasMore: boolean;
    }
  /** The cursor is older than what retention kept: what followed it is gone. */
  | { readonly expired: true };

interface PageRow {
  readonly expired: boolean | null;
  readonly rows: number;
  readonly json: string;
  readonly last_cursor: string | null;
}

/** One page of the feed in its order (see feedRows), `limit + 1` rows at most, along an index. */
export async function listEvents(sql: SqlRunner, { limit, after, type }: ListEventsQuery): Promise<EventPage> {
  const from = after ?? FEED_START;
  const values: unknown[] = [from.txid.toString(), from.seq.toString(), limit + 1];
  try {
    const { rows } = await sql.query<PageRow>(
      type === undefined ? LIST_EVENTS_SQL : LIST_TYPED_EVENTS_SQL,
      type === undefined ? values : [...values, type],
    );
    const [row] = rows;
    if (row === undefined) throw new Error('a feed page statement returned no row');
    // The first page (no cursor) starts at the oldest event kept: never expired.
    if (row.expired === true && after !== undefined) return { expired: true };
    return { expired: false, json: row.json, lastCursor: row.last_cursor ?? undefined, hasMore: row.rows > limit };
  } catch (error) {
    throw translateError(error);
  }
}

/** The feed's current cursor (see CURRENT_CURSOR_SQL): `<xmin>.0`. */
export async function currentEventCursor(sql: SqlRunner): Promise<string> {
  try {
    const { rows } = await sql.query<{ txid: string }>(CURRENT_CURSOR_SQL, []);
    const [row] = rows;
    if (row === undefined) throw new Error('no snapshot');
    return formatCursor({ txid: BigInt(row.txid), seq: 0n });
  } catch (error) {
    throw translateError(error);
  }
}
