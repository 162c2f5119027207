import type { Database } from '../database.js';
import type { ListEventsQuery } from '../events/list-events.js';

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
