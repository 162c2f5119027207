import type { Database } from '../database.js';
import type { ListEventsQuery } from '../events/list-events.js';
import { waitUntil } from '../testing.js';

/** An item of the feed's JSON, as far as the tests read it. */
export interface FeedItem {
  readonly cursor: string;
  readonly eventId: string;
  readonly type: string;
  readonly data: { readonly id: number; readonly name: string; readonly tag?: string; readonly version: number };
}

/**
 * The items of one feed page that `wanted` picks, once there are any: on PostgreSQL the feed
 * shows an event once every older transaction of the server has ended (another test's included),
 * so a read right after a write may not hold it yet. Fails after `timeoutMs`.
 */
export async function feedItems(
  db: Pick<Database, 'listEvents'>,
  query: ListEventsQuery,
  wanted: (item: FeedItem) => boolean,
  timeoutMs = 30_000,
): Promise<FeedItem[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const page = await db.listEvents(query);
    if (page.expired) throw new Error('the feed answered expired');
    const items = (JSON.parse(page.json) as FeedItem[]).filter(wanted);
    if (items.length > 0) return items;
    if (Date.now() > deadline) throw new Error(`no such event in the feed within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The JSON of one feed page once it holds at least `count` items, as the database wrote it (for
 * the caller to parse exactly): the feed may lag a write (see feedItems). Fails after `timeoutMs`.
 */
export async function settledPageJson(
  db: Pick<Database, 'listEvents'>,
  query: ListEventsQuery,
  count: number,
  timeoutMs = 30_000,
): Promise<string> {
  let json = '[]';
  await waitUntil(async () => {
    const page = await db.listEvents(query);
    if (page.expired) throw new Error('the feed answered expired');
    json = page.json;
    // Counted only: no id is read here.
    return (JSON.parse(json) as unknown[]).length >= count;
  }, timeoutMs);
  return json;
}
