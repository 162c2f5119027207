import { translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';
import type { EventPage, FeedCursor, ListEventsQuery } from './list-events.js';

/**
 * Full pages of the event feed, kept in memory: the feed's answer to many mirrors catching up
 * along the same pages (the Kubernetes API server keeps a watch cache for the same reason).
 *
 * A page that is full (`hasMore`) never changes. Its events are those after its cursor up to its
 * `limit`-th, and the feed's guard (see list-events.ts) means no event can later appear among
 * them; retention deletes events only up to the horizon, so none after a cursor at or past the
 * horizon goes either. So such a page, once read, is the answer for as long as its cursor is not
 * older than the horizon: a hit is answered without the database, after a check of the cursor
 * against the horizon this process last read (at most `horizonMaxAgeMs` old, read again after
 * this process's own retention at once). A cursor that another replica's retention has just
 * passed may so still be answered its page, complete, for up to `horizonMaxAgeMs`, rather than
 * 410: the consumer misses nothing either way.
 *
 * Not kept: the first page (no cursor: it starts at the oldest event kept, which retention
 * moves), a page that is not full (the next events may still come), an expired one. Identical
 * reads in flight together share one statement. Bounded by `maxBytes` (the pages' text), the
 * least recently used going first.
 */
export interface FeedPageCache {
  listEvents(query: ListEventsQuery): Promise<EventPage>;
  /** This process's retention moved the horizon: read it again before the next hit. */
  horizonMoved(): void;
  /** Pages held, and their size in bytes (as V8 holds their text: see bytesOf). */
  size(): { readonly pages: number; readonly bytes: number };
}

export interface FeedPageCacheOptions {
  /** The pages' text held at most; 0 keeps none (every read goes to the database). */
  readonly maxBytes: number;
  /** How old the horizon a hit is checked against may be. */
  readonly horizonMaxAgeMs: number;
  /** The database read of a page (list-events.ts's listEvents, timed and traced). */
  readonly readPage: (query: ListEventsQuery) => Promise<EventPage>;
  /** Wraps the horizon's read (to time and trace it); default: as it is. */
  readonly observeHorizonRead?: <T>(read: () => Promise<T>) => Promise<T>;
  /** Default Date.now (tests pass a clock). */
  readonly now?: () => number;
}

export const FEED_HORIZON_SQL =
  'SELECT horizon.txid::text AS txid, horizon.seq::text AS seq FROM public.event_feed_horizon AS horizon';

interface Held {
  readonly page: EventPage & { readonly expired: false };
  readonly bytes: number;
}

/** Any character beyond Latin-1: V8 holds such a string at two bytes a character, else at one. */
const TWO_BYTE = /[\u0100-\uffff]/;

/** Bytes a page is counted as: its JSON as V8 holds it, its last cursor and key, and the entry around them. */
function bytesOf(page: EventPage & { readonly expired: false }, key: string): number {
  const json = page.json.length * (TWO_BYTE.test(page.json) ? 2 : 1);
  return json + (page.lastCursor?.length ?? 0) + key.length + 256;
}

function notBefore(cursor: FeedCursor, horizon: FeedCursor): boolean {
  return cursor.txid > horizon.txid || (cursor.txid === horizon.txid && cursor.seq >= horizon.seq);
}

export function createFeedPageCache(sql: SqlRunner, options: FeedPageCacheOptions): FeedPageCache {
  const { maxBytes, horizonMaxAgeMs, readPage, now = Date.now, observeHorizonRead = (read) => read() } = options;
  // A Map keeps insertion order: a hit is put back at the end, so the first key is the least recently used.
  const pages = new Map<string, Held>();
  const reading = new Map<string, Promise<EventPage>>();
  let bytes = 0;
  let horizon: { readonly cursor: FeedCursor; readonly readAt: number } | undefined;
  let horizonRead: Promise<FeedCursor> | undefined;
  // Counts horizonMoved calls: a read begun before one is not kept.
  let generation = 0;

  const readHorizon = async (): Promise<FeedCursor> => {
    const startedAt = now();
    const startedIn = generation;
    try {
      const { rows } = await observeHorizonRead(() => sql.query<{ txid: string; seq: string }>(FEED_HORIZON_SQL, []));
      const [row] = rows;
      const cursor = row === undefined ? { txid: 0n, seq: 0n } : { txid: BigInt(row.txid), seq: BigInt(row.seq) };
      // As of when the read began: a retention that committed meanwhile is caught by the next read.
      if (startedIn === generation) horizon = { cursor, readAt: startedAt };
      return cursor;
    } catch (error) {
      throw translateError(error);
    }
  };
  const currentHorizon = (): Promise<FeedCursor> | FeedCursor => {
    if (horizon !== undefined && now() - horizon.readAt <= horizonMaxAgeMs) return horizon.cursor;
    if (horizonRead === undefined) {
      const read = readHorizon().finally(() => {
        if (horizonRead === read) horizonRead = undefined;
      });
      horizonRead = read;
    }
    return horizonRead;
  };

  /** Forgets `key` if it still holds `held` (another read may have replaced or evicted it meanwhile). */
  const drop = (key: string, held: Held) => {
    if (pages.get(key) !== held) return;
    pages.delete(key);
    bytes -= held.bytes;
  };
  const keep = (key: string, held: Held) => {
    if (held.bytes > maxBytes) return;
    const old = pages.get(key);
    if (old !== undefined) drop(key, old);
    pages.set(key, held);
    bytes += held.bytes;
    for (const [oldest, entry] of pages) {
      if (bytes <= maxBytes) break;
      drop(oldest, entry);
    }
  };

  const readAndKeep = async (key: string, query: ListEventsQuery) => {
    try {
      const page = await readPage(query);
      if (!page.expired && page.hasMore) keep(key, { page, bytes: bytesOf(page, key) });
      return page;
    } finally {
      reading.delete(key);
    }
  };

  return {
    async listEvents(query) {
      const { after } = query;
      if (maxBytes === 0 || after === undefined) return readPage(query);
      const key = `${query.type ?? '*'} ${query.limit} ${after.txid}.${after.seq}`;
      const held = pages.get(key);
      if (held !== undefined) {
        if (notBefore(after, await currentHorizon())) {
          // Most recently used now, unless evicted while the horizon was read (its bytes are gone).
          if (pages.get(key) === held) {
            pages.delete(key);
            pages.set(key, held);
          }
          return held.page;
        }
        // Retention has passed it: the database says expired.
        drop(key, held);
      }
      let read = reading.get(key);
      if (read === undefined) {
        read = readAndKeep(key, query);
        reading.set(key, read);
      }
      return read;
    },
    horizonMoved() {
      horizon = undefined;
      horizonRead = undefined;
      generation += 1;
    },
    size: () => ({ pages: pages.size, bytes }),
  };
}
