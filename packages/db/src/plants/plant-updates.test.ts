import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../database.js';
import { type FeedItem, feedItems } from '../test-support/feed-items.js';
import { createTestStorage, TEST_ACTOR, type TestStorage, testEngines } from '../testing.js';

describe.each(testEngines())('changing plants on %s', (engine) => {
  let storage: TestStorage;
  let db: Database;
  let nudges = 0;

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir, onWebhookEvents: () => nudges++ });
  });
  afterAll(async () => {
    await db?.close();
    await storage?.dispose();
  });

  const update = (id: bigint, patch: { name?: string; tag?: string | null }, ifMatch?: readonly bigint[]) =>
    db.updatePlant({ id, patch, ifMatch, actor: TEST_ACTOR });

  it('renames, retags and untags, each change a new version the id never had', async () => {
    const created = await db.createPlant({ id: 2n ** 63n - 1n, name: 'Fern', tag: 'shade' });
    const renamed = await update(2n ** 63n - 1n, { name: 'Boston fern' });
    expect(renamed).toMatchObject({
      outcome: 'updated',
      plant: { id: 2n ** 63n - 1n, name: 'Boston fern', tag: 'shade' },
    });
    const untagged = await update(2n ** 63n - 1n, { tag: null });
    expect(untagged).toEqual({
      outcome: 'updated',
      plant: { id: 2n ** 63n - 1n, name: 'Boston fern' },
      version: expect.any(BigInt),
    });
    const retagged = await update(2n ** 63n - 1n, { name: 'Fern', tag: '' });
    expect(retagged).toMatchObject({ outcome: 'updated', plant: { name: 'Fern', tag: '' } });
    const versions = [created.version, renamed, untagged, retagged].map((result) =>
      typeof result === 'bigint' ? result : 'version' in result ? result.version : -1n,
    );
    expect(new Set(versions).size).toBe(4);
    expect(versions).toEqual([...versions].sort((a, b) => (a < b ? -1 : 1)));
    expect(await db.findPlant(2n ** 63n - 1n)).toEqual({
      plant: { id: 2n ** 63n - 1n, name: 'Fern', tag: '' },
      version: versions[3],
    });
  });

  it('writes nothing for a patch that changes nothing: same version, no event', async () => {
    const { version } = await db.createPlant({ id: 10n, name: 'Aloe' });
    expect(await update(10n, { name: 'Aloe' })).toEqual({
      outcome: 'unchanged',
      plant: { id: 10n, name: 'Aloe' },
      version,
    });
    expect(await update(10n, {})).toEqual({ outcome: 'unchanged', plant: { id: 10n, name: 'Aloe' }, version });
    expect(await update(10n, { tag: null })).toMatchObject({ outcome: 'unchanged', version });
    // Then one change: once the feed shows it, the plant's events are its create and that change.
    await update(10n, { tag: 'succulent' });
    const mine = (item: FeedItem) => item.data.id === 10;
    await feedItems(db, { limit: 1000, type: 'plant.updated' }, mine);
    const page = await db.listEvents({ limit: 1000 });
    if (page.expired) throw new Error('expired');
    expect((JSON.parse(page.json) as FeedItem[]).filter(mine).map((item) => item.type)).toEqual([
      'plant.created',
      'plant.updated',
    ]);
  });

  it('answers missing for no such plant, and mismatch with the current version under another If-Match', async () => {
    expect(await update(404n, { name: 'Ghost' })).toEqual({ outcome: 'missing' });
    expect(await update(404n, { name: 'Ghost' }, [1n])).toEqual({ outcome: 'missing' });
    const { version } = await db.createPlant({ id: 11n, name: 'Cactus' });
    expect(await update(11n, { name: 'Prickly' }, [version + 1000n])).toEqual({ outcome: 'mismatch', version });
    expect(await update(11n, { name: 'Prickly' }, [])).toEqual({ outcome: 'mismatch', version });
    expect((await db.findPlant(11n))?.plant.name).toBe('Cactus');
    expect(await update(11n, { name: 'Prickly' }, [version - 1n, version])).toMatchObject({ outcome: 'updated' });
  });

  it('deletes under If-Match only with the current version, announcing the plant as it was', async () => {
    const { version } = await db.createPlant({ id: 12n, name: 'Ivy', tag: 'climber' });
    expect(await db.deletePlant(12n, TEST_ACTOR, { ifMatch: [version + 1n] })).toEqual({
      outcome: 'mismatch',
      version,
    });
    expect(await db.deletePlant(404n, TEST_ACTOR, { ifMatch: [version] })).toEqual({ outcome: 'missing' });
    expect(await db.deletePlant(12n, TEST_ACTOR, { ifMatch: [version] })).toMatchObject({ outcome: 'deleted' });
    // (On PostgreSQL the feed shows it once older transactions of the server ended.)
    const [deleted] = await feedItems(db, { limit: 1000, type: 'plant.deleted' }, (item) => item.data.id === 12);
    expect(deleted).toMatchObject({ data: { id: 12, name: 'Ivy', tag: 'climber' } });
    // The deletion's own version, above the plant's: a mirror holding the plant applies it.
    expect(deleted?.data.version).toBeGreaterThan(Number(version));
  });

  it('group-commits concurrent updates, several of one id in order, each answered', async () => {
    await db.createPlant({ id: 20n, name: 'zero' });
    await db.createPlant({ id: 21n, name: 'zero' });
    nudges = 0;
    const results = await Promise.all([
      update(20n, { name: 'one' }),
      update(21n, { name: 'one' }),
      update(20n, { name: 'two' }),
      update(20n, { name: 'two' }),
      update(20n, { name: 'three' }),
    ]);
    expect(results.map((result) => result.outcome)).toEqual(['updated', 'updated', 'updated', 'unchanged', 'updated']);
    expect((await db.findPlant(20n))?.plant.name).toBe('three');
    // No subscription: nothing was queued for the fan-out, nobody nudged.
    expect(nudges).toBe(0);
  });

  it('records every change in the audit log of the acting team', async () => {
    await db.createPlant({ id: 30n, name: 'Palm' });
    await db.updatePlant({
      id: 30n,
      patch: { name: 'Areca palm' },
      actor: { kind: 'token', name: 'gardener', team: 'green', clientAddress: '192.0.2.1' },
    });
    const { events } = await db.listAuditEvents({ team: 'green', limit: 10 });
    expect(events.map((event) => [event.action, event.target, event.actor.name, event.clientAddress])).toEqual([
      ['plant.updated', '30', 'gardener', '192.0.2.1'],
    ]);
  });
});
