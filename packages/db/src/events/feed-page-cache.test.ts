import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertPlantsFannedOut, openTestClient, type TestClient } from '../test-support/open-test-client.js';
import { createTestStorage, type TestStorage, testEngines, waitUntil } from '../testing.js';
import { deleteOldWebhookData } from '../webhooks/retention.js';
import { createFeedPageCache } from './feed-page-cache.js';
import { type EventPage, type FeedCursor, type ListEventsQuery, listEvents, parseCursor } from './list-events.js';

const EVENTS = 30;

describe.each(testEngines())('the feed page cache on %s', (engine) => {
  let storage: TestStorage;
  let client: TestClient;
  /** The events' cursors, in feed order. */
  let cursors: FeedCursor[] = [];
  let clock = 0;
  let reads: ListEventsQuery[] = [];

  /** A cache over the real feed that counts its reads of the database, on a clock the test moves. */
  const cacheOf = (maxBytes = 1 << 20) => {
    reads = [];
    return createFeedPageCache(client.sql, {
      maxBytes,
      horizonMaxAgeMs: 1_000,
      now: () => clock,
      readPage: (query) => {
        reads.push(query);
        return listEvents(client.sql, query);
      },
    });
  };
  const after = (index: number): FeedCursor => {
    const cursor = cursors[index];
    if (cursor === undefined) throw new Error(`no event ${index}`);
    return cursor;
  };
  const shown = (page: EventPage) =>
    page.expired ? 'expired' : (JSON.parse(page.json) as { cursor: string }[]).length;

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    client = await openTestClient(storage);
    await insertPlantsFannedOut(
      client.sql,
      Array.from({ length: EVENTS }, (_, i) => ({ id: BigInt(i + 1), name: `plant ${i + 1}` })),
    );
    // On PostgreSQL the feed shows them once every older transaction of the server has ended.
    await waitUntil(async () => {
      const page = await listEvents(client.sql, { limit: 100 });
      if (page.expired) return false;
      cursors = (JSON.parse(page.json) as { cursor: string }[]).map(({ cursor }) => {
        const parsed = parseCursor(cursor);
        if (parsed === null) throw new Error(`not a cursor: ${cursor}`);
        return parsed;
      });
      return cursors.length === EVENTS;
    }, 30_000);
  });
  afterAll(async () => {
    await client?.close();
    await storage?.dispose();
  });

  it('answers a full page again without the database, the same page; never a last or first page', async () => {
    const cache = cacheOf();
    const full = await cache.listEvents({ limit: 10, after: after(0) });
    expect(full).toMatchObject({ expired: false, hasMore: true });
    expect(shown(full)).toBe(10);
    expect(await cache.listEvents({ limit: 10, after: after(0) })).toBe(full);
    expect(reads).toHaveLength(1);
    // Another limit or type is another page.
    await cache.listEvents({ limit: 9, after: after(0) });
    await cache.listEvents({ limit: 10, after: after(0), type: 'plant.created' });
    expect(reads).toHaveLength(3);

    // The last page (more may come) and the first (it moves with retention) are read each time.
    const last = await cache.listEvents({ limit: 10, after: after(EVENTS - 5) });
    expect(last).toMatchObject({ expired: false, hasMore: false });
    await cache.listEvents({ limit: 10, after: after(EVENTS - 5) });
    await cache.listEvents({ limit: 10 });
    await cache.listEvents({ limit: 10 });
    expect(reads).toHaveLength(7);
    expect(cache.size().pages).toBe(3);

    // Nothing kept at 0 bytes.
    const none = cacheOf(0);
    await none.listEvents({ limit: 10, after: after(0) });
    await none.listEvents({ limit: 10, after: after(0) });
    expect(reads).toHaveLength(2);
    expect(none.size()).toEqual({ pages: 0, bytes: 0 });
  });

  it('shares one read among identical reads in flight', async () => {
    const cache = cacheOf();
    const pages = await Promise.all(Array.from({ length: 5 }, () => cache.listEvents({ limit: 5, after: after(3) })));
    expect(reads).toHaveLength(1);
    for (const page of pages) expect(page).toBe(pages[0]);
  });

  it('keeps at most its bytes, the least recently used going first', async () => {
    const measuring = cacheOf();
    await measuring.listEvents({ limit: 10, after: after(0) });
    const onePage = measuring.size().bytes;
    // Room for two pages of ten, not three.
    const cache = cacheOf(Math.floor(onePage * 2.5));
    const [a, b, c] = [after(0), after(1), after(2)];
    await cache.listEvents({ limit: 10, after: a });
    await cache.listEvents({ limit: 10, after: b });
    await cache.listEvents({ limit: 10, after: a });
    await cache.listEvents({ limit: 10, after: c });
    expect(reads).toHaveLength(3);
    expect(cache.size().pages).toBe(2);
    expect(cache.size().bytes).toBeLessThanOrEqual(Math.floor(onePage * 2.5));
    // b went (least recently used), a and c stayed.
    await cache.listEvents({ limit: 10, after: a });
    await cache.listEvents({ limit: 10, after: c });
    expect(reads).toHaveLength(3);
    await cache.listEvents({ limit: 10, after: b });
    expect(reads).toHaveLength(4);
  });

  // Last: retention deletes the first events.
  it('answers 410 once retention passes the cursor: after horizonMoved at once, after another process retention within horizonMaxAgeMs', async () => {
    clock = 0;
    const cache = cacheOf();
    expect(shown(await cache.listEvents({ limit: 10, after: after(0) }))).toBe(10);
    expect(shown(await cache.listEvents({ limit: 10, after: after(0) }))).toBe(10);
    expect(reads).toHaveLength(1);

    // Another process's retention deletes the first five events: the horizon passes event 0.
    expect(await deleteOldWebhookData(client.sql, { olderThanMs: 0, batchSize: 5 })).toMatchObject({ events: 5 });
    clock = 1_000;
    // The horizon this cache read (at 0) is a second old: the page, complete, is still the answer.
    expect(shown(await cache.listEvents({ limit: 10, after: after(0) }))).toBe(10);
    expect(reads).toHaveLength(1);
    clock = 1_001;
    expect(shown(await cache.listEvents({ limit: 10, after: after(0) }))).toBe('expired');
    expect(reads).toHaveLength(2);

    // A page after the horizon is kept; this process's own retention passes it: 410 at once.
    expect(shown(await cache.listEvents({ limit: 10, after: after(6) }))).toBe(10);
    expect(await deleteOldWebhookData(client.sql, { olderThanMs: 0, batchSize: 5 })).toMatchObject({ events: 5 });
    expect(shown(await cache.listEvents({ limit: 10, after: after(6) }))).toBe(10);
    cache.horizonMoved();
    expect(shown(await cache.listEvents({ limit: 10, after: after(6) }))).toBe('expired');
    // A cursor still kept is answered from the database, then kept.
    expect(shown(await cache.listEvents({ limit: 10, after: after(12) }))).toBe(10);
    const before = reads.length;
    expect(shown(await cache.listEvents({ limit: 10, after: after(12) }))).toBe(10);
    expect(reads).toHaveLength(before);
  });
});

describe('the feed page cache, counting bytes', () => {
  it('counts a page of Latin-1 text at a byte a character, any other at two', async () => {
    const cache = createFeedPageCache(
      {
        query: () => Promise.resolve({ rows: [{ txid: '0', seq: '0' }] as never[] }),
      },
      {
        maxBytes: 1 << 20,
        horizonMaxAgeMs: 1_000,
        readPage: async ({ after }) => ({
          expired: false,
          // 10,000 characters either way.
          json: after?.seq === 1n ? 'é'.repeat(10_000) : `${'ñ'.repeat(9_998)}🌿`,
          lastCursor: undefined,
          hasMore: true,
        }),
      },
    );
    await cache.listEvents({ limit: 1, after: { txid: 1n, seq: 1n } });
    const latin1 = cache.size().bytes;
    await cache.listEvents({ limit: 1, after: { txid: 1n, seq: 2n } });
    const other = cache.size().bytes - latin1;
    expect(latin1).toBeGreaterThanOrEqual(10_000);
    expect(latin1).toBeLessThan(11_000);
    expect(other - latin1).toBe(10_000);
  });
});

describe('the feed page cache, evicting', () => {
  it('does not put back a page evicted while a hit read the horizon', async () => {
    let clock = 0;
    const horizonReads: Array<() => void> = [];
    const cache = createFeedPageCache(
      {
        // The horizon's read waits until the test lets it answer.
        query: () =>
          new Promise((resolve) => horizonReads.push(() => resolve({ rows: [{ txid: '0', seq: '0' }] as never[] }))),
      },
      {
        // Two pages of 1,000 characters, not three.
        maxBytes: 2 * 1_300,
        horizonMaxAgeMs: 1_000,
        now: () => clock,
        readPage: async () => ({ expired: false, json: 'x'.repeat(1_000), lastCursor: undefined, hasMore: true }),
      },
    );
    const at = (seq: bigint) => ({ limit: 1, after: { txid: 1n, seq } });
    await cache.listEvents(at(1n));
    // The first hit reads the horizon.
    const firstHit = cache.listEvents(at(1n));
    await waitUntil(() => horizonReads.length === 1);
    horizonReads[0]?.();
    await firstHit;
    // A second later, a hit reads it again; meanwhile two other pages push the first one out.
    clock = 2_000;
    const hit = cache.listEvents(at(1n));
    await waitUntil(() => horizonReads.length === 2);
    await cache.listEvents(at(2n));
    await cache.listEvents(at(3n));
    horizonReads[1]?.();
    expect(await hit).toMatchObject({ expired: false, hasMore: true });
    const { pages, bytes } = cache.size();
    expect(pages).toBe(2);
    expect(bytes).toBeLessThanOrEqual(2 * 1_300);
    expect(bytes).toBeGreaterThan(2_000);
  });
});
