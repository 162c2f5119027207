import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../database.js';
import type { FeedItem } from '../test-support/feed-items.js';
import { createTestStorage, TEST_ACTOR, type TestStorage, testEngines } from '../testing.js';
import { type FeedCursor, formatCursor, parseCursor } from './list-events.js';

/** Every event after `after`, page by page of `limit`, as a consumer follows the feed. */
async function follow(db: Database, after: FeedCursor | undefined, limit = 2): Promise<FeedItem[]> {
  const items: FeedItem[] = [];
  let cursor = after;
  for (;;) {
    const page = await db.listEvents({ limit, after: cursor });
    if (page.expired) throw new Error('expired');
    items.push(...(JSON.parse(page.json) as FeedItem[]));
    if (!page.hasMore) return items;
    cursor = parseCursor(page.lastCursor ?? '') ?? undefined;
  }
}

/** What `read` gives once it holds `count` items (the feed shows an event once older transactions ended). */
async function settled<T>(read: () => Promise<T[]>, count: number, timeoutMs = 30_000): Promise<T[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const items = await read();
    if (items.length >= count || Date.now() > deadline) return items;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.each(testEngines())('the event feed on %s', (engine) => {
  let storage: TestStorage;
  let db: Database;

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir });
  });
  afterAll(async () => {
    await db?.close();
    await storage?.dispose();
  });

  it('lists creates, updates and deletes in order, whether or not anyone subscribes, with cursors that ascend', async () => {
    const start = parseCursor(await db.currentEventCursor()) ?? undefined;
    await db.createPlant({ id: 1n, name: 'Aloe' });
    await db.updatePlant({ id: 1n, patch: { name: 'Aloe vera' }, actor: TEST_ACTOR });
    await db.createPlant({ id: 2n, name: 'Basil' });
    await db.deletePlant(1n, TEST_ACTOR);
    const items = await settled(() => follow(db, start), 4);
    expect(items.map((item) => [item.type, item.data.id, item.data.name])).toEqual([
      ['plant.created', 1, 'Aloe'],
      ['plant.updated', 1, 'Aloe vera'],
      ['plant.created', 2, 'Basil'],
      ['plant.deleted', 1, 'Aloe vera'],
    ]);
    const cursors = items.map((item) => parseCursor(item.cursor));
    for (let index = 1; index < cursors.length; index++) {
      const [previous, current] = [cursors[index - 1], cursors[index]];
      if (!previous || !current) throw new Error('a cursor did not parse');
      expect(previous.txid < current.txid || (previous.txid === current.txid && previous.seq < current.seq)).toBe(true);
    }
    // Every kind's id is msg_ and a UUIDv7 (the statement's clock, the event's seq): ascending in
    // the feed's order, each on the right-hand edge of the events' primary key.
    const ids = items.map((item) => item.eventId);
    for (const id of ids)
      expect(id).toMatch(/^msg_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    // The delete carries the plant as it was, with a version of its own above the update's.
    expect(items[3]?.data.version).toBeGreaterThan(items[1]?.data.version ?? Number.POSITIVE_INFINITY);
    const typed = await db.listEvents({ limit: 10, after: start, type: 'plant.created' });
    expect(typed.expired).toBe(false);
    if (!typed.expired) expect((JSON.parse(typed.json) as FeedItem[]).map((item) => item.data.id)).toEqual([1, 2]);
  });

  it('reads cursors back exactly, and refuses what is no cursor', () => {
    expect(parseCursor('18446744073709551615.9223372036854775807')).toEqual({
      txid: 2n ** 64n - 1n,
      seq: 2n ** 63n - 1n,
    });
    expect(formatCursor({ txid: 5n, seq: 7n })).toBe('5.7');
    for (const text of ['18446744073709551616.0', '1.9223372036854775808', '1', '1.', '.1', '-1.0', '1.0 ']) {
      expect(parseCursor(text)).toBeNull();
    }
  });
});

// The sequence-gap problem of outbox tables: a transaction that began first (a lower id, a lower
// serial) may commit after one that began later. A reader that returned the later one and moved
// its cursor past it would never see the earlier one. The feed holds back every event of
// transactions newer than the oldest one still running.
describe.skipIf(!testEngines().includes('postgres'))('the feed and a transaction still running (PostgreSQL)', () => {
  let storage: TestStorage;
  let db: Database;
  let held: pg.Client;

  beforeAll(async () => {
    storage = await createTestStorage('postgres', { migrated: true });
    db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir });
    held = new pg.Client({ connectionString: storage.databaseUrl });
    await held.connect();
  });
  afterAll(async () => {
    await held?.end();
    await db?.close();
    await storage?.dispose();
  });

  it('never lists an event after one that committed before it: a later page holds nothing older than the cursor', async () => {
    const start = parseCursor(await db.currentEventCursor()) ?? undefined;
    // An earlier transaction writes its event and stays open.
    await held.query('BEGIN');
    await held.query(
      `INSERT INTO public.plants (id, name) VALUES (100, 'Early') ;
       INSERT INTO public.webhook_events (plant_id, type, version, payload, envelope, fanned_out_at)
       SELECT 100, 'plant.created', plants.version, '{"id":100,"name":"Early"}',
         '{"type":"plant.created","timestamp":"2026-11-27T10:00:00.000Z","data":{"id":100,"name":"Early","version":' || plants.version || '}}',
         now()
       FROM public.plants WHERE plants.id = 100`,
    );
    // A later one commits first.
    await db.createPlant({ id: 101n, name: 'Late' });
    expect(await db.findPlant(101n)).not.toBeNull();
    // While the earlier one runs, the later event is not listed: nothing could sort before it later.
    expect(await follow(db, start)).toEqual([]);
    await held.query('COMMIT');
    // (Another database's transaction on the server may hold the feed back a little longer.)
    const items = await settled(() => follow(db, start), 2);
    expect(items.map((item) => item.data.name)).toEqual(['Early', 'Late']);
    // A consumer that had followed up to any event misses nothing after it.
    expect((await follow(db, parseCursor(items[0]?.cursor ?? '') ?? undefined)).map((item) => item.data.name)).toEqual([
      'Late',
    ]);
  });
});
