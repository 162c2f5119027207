import { text } from 'node:stream/consumers';
import { INT64_MAX, INT64_MIN, type NewPlant, parseJson, stringifyJson } from '@plant-store/schema';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BULK_APPLICATION_NAME, type Database, openDatabase } from '../database.js';
import { ImportRejectedError } from '../errors.js';
import { parseCursor } from '../events/list-events.js';
import { settledPageJson } from '../test-support/feed-items.js';
import { createTestStorage, TEST_ACTOR, type TestStorage, testEngines, waitUntil } from '../testing.js';
import type { ImportLine } from './import-plants.js';

/** The plants as an import's lines, numbered from 1. */
async function* linesOf(plants: readonly NewPlant[]): AsyncGenerator<ImportLine> {
  let line = 0;
  for (const plant of plants) yield { line: ++line, value: plant };
}

/** Lines that fail after `count` good ones, as a request cut short does. */
async function* failingAfter(count: number, error: Error): AsyncGenerator<ImportLine> {
  for (let line = 1; line <= count; line++)
    yield { line, value: { id: BigInt(1_000_000 + line), name: `cut ${line}` } };
  throw error;
}

function exported(ndjson: string): unknown[] {
  return ndjson
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => parseJson(line));
}

describe.each(testEngines())('import and export on %s', (engine) => {
  let storage: TestStorage;
  let db: Database;
  const options = { actor: TEST_ACTOR };

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir });
  });
  afterAll(async () => {
    await db?.close();
    await storage?.dispose();
  });

  it('stores new plants with their events, counts a replay as stored, and exports them in id order', async () => {
    await db.createPlant({ id: 5n, name: 'Fern', tag: 'shade' });
    const plants: NewPlant[] = [
      { id: INT64_MAX, name: 'Top' },
      { id: 5n, name: 'Fern', tag: 'shade' },
      { id: INT64_MIN, name: 'Bottom', tag: 'tab\there \\ "quoted"\nnewline' },
      { id: 2n ** 53n + 1n, name: 'Exact' },
      { id: 2n ** 53n + 1n, name: 'Exact' },
    ];
    expect(await db.importPlants(linesOf(plants), options)).toEqual({
      lines: 5,
      stored: 3,
      alreadyStored: 1,
      events: 0,
    });
    const top = await db.findPlant(INT64_MAX);
    expect(top?.plant).toEqual({ id: INT64_MAX, name: 'Top' });
    const items = parseJson(await settledPageJson(db, { limit: 10 }, 4)) as { type: string; data: { id: bigint } }[];
    expect(items.map((item) => [item.type, item.data.id])).toEqual([
      ['plant.created', 5n],
      ['plant.created', INT64_MIN],
      ['plant.created', 2n ** 53n + 1n],
      ['plant.created', INT64_MAX],
    ]);
    // An identical retry stores nothing more.
    expect(await db.importPlants(linesOf(plants), options)).toMatchObject({ lines: 5, stored: 0, alreadyStored: 4 });
    const audit = await db.listAuditEvents({ limit: 10, team: TEST_ACTOR.team ?? 'default' });
    expect(audit.events.filter((event) => event.action === 'plants.imported').map((event) => event.details)).toEqual([
      { lines: 5, stored: 3, alreadyStored: 1 },
      { lines: 5, stored: 0, alreadyStored: 4 },
    ]);

    const all = await db.exportPlants({});
    expect(parseCursor(all.cursor)).not.toBeNull();
    expect(exported(await text(all.lines))).toEqual([
      { id: INT64_MIN, name: 'Bottom', tag: 'tab\there \\ "quoted"\nnewline' },
      { id: 5n, name: 'Fern', tag: 'shade' },
      { id: 2n ** 53n + 1n, name: 'Exact' },
      { id: INT64_MAX, name: 'Top' },
    ]);
    const shade = await db.exportPlants({ tag: 'shade' });
    expect(exported(await text(shade.lines))).toEqual([{ id: 5n, name: 'Fern', tag: 'shade' }]);
    const quoted = await db.exportPlants({ tag: "it's" });
    expect(await text(quoted.lines)).toBe('');
  });

  it('refuses an id repeated with other content, naming both lines, and stores nothing', async () => {
    const plants: NewPlant[] = [
      { id: 100n, name: 'One' },
      { id: 101n, name: 'Two' },
      { id: 100n, name: 'One', tag: '' },
    ];
    const refused = db.importPlants(linesOf(plants), options);
    await expect(refused).rejects.toBeInstanceOf(ImportRejectedError);
    await expect(refused).rejects.toMatchObject({ line: 3, firstLine: 1, rule: 'repeated-id' });
    expect(await db.findPlant(101n)).toBeNull();
  });

  it('refuses an id stored with other content, naming the line, and stores nothing', async () => {
    await db.createPlant({ id: 200n, name: 'Stored' });
    const plants: NewPlant[] = [
      { id: 201n, name: 'New' },
      { id: 200n, name: 'Other' },
    ];
    await expect(db.importPlants(linesOf(plants), options)).rejects.toMatchObject({
      line: 2,
      rule: 'stored-conflict',
      message: 'line 2: a plant with id 200 already exists with a different name or tag',
    });
    expect(await db.findPlant(201n)).toBeNull();
  });

  it('stores nothing when the lines fail half-way, and takes the next import', async () => {
    const cut = new Error('request body was aborted before it was complete');
    await expect(db.importPlants(failingAfter(5_000, cut), options)).rejects.toBe(cut);
    expect(await db.findPlant(1_000_001n)).toBeNull();
    expect(await db.importPlants(linesOf([{ id: 300n, name: 'After' }]), options)).toMatchObject({ stored: 1 });
  });

  it('writes the events a create writes, ids UUIDv7 ascending in the feed, in id order whatever the lines order', async () => {
    const from = parseCursor(await db.currentEventCursor()) ?? undefined;
    const ascending: NewPlant[] = [
      { id: 7_001n, name: 'A "quoted" \\ name', tag: 'tab\there' },
      { id: 7_002n, name: 'B' },
    ];
    const shuffled: NewPlant[] = [
      { id: 7_004n, name: 'D', tag: 'd' },
      { id: 7_003n, name: 'C' },
      { id: 7_004n, name: 'D', tag: 'd' },
    ];
    expect(await db.importPlants(linesOf(ascending), options)).toMatchObject({ stored: 2 });
    expect(await db.importPlants(linesOf(shuffled), options)).toMatchObject({ lines: 3, stored: 2 });
    await db.createPlant({ id: 7_005n, name: 'E', tag: 'e' });
    const json = await settledPageJson(db, { limit: 10, after: from }, 5);
    const items = parseJson(json) as { eventId: string; type: string; timestamp: string; data: object }[];
    // The page is exactly what the contract's codec writes of it: the same bytes as a create's.
    expect(stringifyJson(items)).toBe(json);
    expect(items.map((item) => [item.type, item.data])).toEqual([
      ['plant.created', { ...ascending[0], version: expect.any(BigInt) }],
      ['plant.created', { ...ascending[1], version: expect.any(BigInt) }],
      ['plant.created', { id: 7_003n, name: 'C', version: expect.any(BigInt) }],
      ['plant.created', { id: 7_004n, name: 'D', tag: 'd', version: expect.any(BigInt) }],
      ['plant.created', { id: 7_005n, name: 'E', tag: 'e', version: expect.any(BigInt) }],
    ]);
    const created = items.at(-1);
    for (const item of items.slice(0, 4)) {
      expect(item.eventId).toMatch(/^msg_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(Object.keys(item)).toEqual(Object.keys(created ?? {}));
      expect(item.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    const ids = items.slice(0, 4).map((item) => item.eventId);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(4);
  });

  it('gives the connection back when an export is dropped half-way', async () => {
    await db.importPlants(
      linesOf(Array.from({ length: 20_000 }, (_, i) => ({ id: BigInt(10_000 + i), name: `bulk ${i}` }))),
      options,
    );
    const partial = await db.exportPlants({});
    const first = await new Promise<unknown>((resolve) => partial.lines.once('data', resolve));
    expect(String(first)).toMatch(/^\{"id":/);
    partial.lines.destroy();
    await new Promise((resolve) => partial.lines.once('close', resolve));
    if (engine === 'postgres') {
      const client = new pg.Client({ connectionString: storage.databaseUrl });
      await client.connect();
      try {
        // The dropped export's session ends on the server: nothing of it is left running.
        await waitUntil(
          async () => {
            const { rows } = await client.query<{ busy: number }>(
              `SELECT count(*)::int AS busy FROM pg_stat_activity
               WHERE application_name = $1 AND datname = current_database() AND state <> 'idle'`,
              [BULK_APPLICATION_NAME],
            );
            return rows[0]?.busy === 0;
          },
          10_000,
          20,
        );
      } finally {
        await client.end();
      }
    }
    // The database serves the next export (on PGlite: the dropped one's transaction has ended).
    const whole = await db.exportPlants({});
    expect(exported(await text(whole.lines)).length).toBeGreaterThan(20_000);
  });
  it.runIf(engine === 'postgres').each([
    ['the same plant: counted as already stored', 'Raced', { stored: 2, alreadyStored: 1 }],
    ['another plant: refused, naming the line', 'Other', undefined],
  ])('meets a create of one of its ids committed while it inserts, %s', async (_case, racedName, counts) => {
    const other = new pg.Client({ connectionString: storage.databaseUrl });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query(`INSERT INTO plants (id, name) VALUES (${racedName === 'Raced' ? 8_002 : 9_002}, $1)`, [
        racedName,
      ]);
      const base = racedName === 'Raced' ? 8_000n : 9_000n;
      const plants: NewPlant[] = [1n, 2n, 3n].map((n) => ({ id: base + n, name: n === 2n ? 'Raced' : `race ${n}` }));
      const importing = db.importPlants(linesOf(plants), options);
      importing.catch(() => {});
      // The import's insert waits for the other transaction's row: then it commits.
      await waitUntil(
        async () => {
          const { rows } = await other.query<{ waiting: number }>(
            `SELECT count(*)::int AS waiting FROM pg_stat_activity
             WHERE application_name = $1 AND datname = current_database() AND wait_event_type = 'Lock'`,
            [BULK_APPLICATION_NAME],
          );
          return rows[0]?.waiting === 1;
        },
        30_000,
        20,
      );
      await other.query('COMMIT');
      if (counts === undefined) {
        await expect(importing).rejects.toMatchObject({ line: 2, rule: 'stored-conflict' });
        expect(await db.findPlant(base + 1n)).toBeNull();
        expect(await db.findPlant(base + 3n)).toBeNull();
      } else {
        expect(await importing).toMatchObject({ lines: 3, ...counts });
        expect((await db.findPlant(base + 3n))?.plant).toEqual({ id: base + 3n, name: 'race 3' });
        const events = await other.query<{ plant_id: string }>(
          'SELECT plant_id::text FROM webhook_events WHERE plant_id BETWEEN $1 AND $2 ORDER BY seq',
          [String(base + 1n), String(base + 3n)],
        );
        expect(events.rows.map((row) => row.plant_id)).toEqual([String(base + 1n), String(base + 3n)]);
      }
    } finally {
      await other.end();
    }
  });
});
