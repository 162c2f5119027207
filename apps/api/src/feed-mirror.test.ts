import { openDatabase } from '@plant-store/db';
import { createTestStorage, type TestStorage, testEngines, testToken } from '@plant-store/db/testing';
import { type Event, EventListSchema, type StoredPlant, StoredPlantSchema } from '@plant-store/schema';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failOnContractViolations } from './test-support/checked-fetch.js';
import { type ServiceProcess, startServiceProcess, storageEnv } from './test-support/service-process.js';
import { request } from './test-support/test-service.js';

failOnContractViolations();

const WRITERS_PER_REPLICA = 3;
const OPERATIONS_PER_WRITER = 200;
/** The ids the writers fight over: few enough that creates, updates and deletes collide. */
const ID_SPACE = 120;
const SENTINEL_ID = 1_000_000n;

/** A change a writer was answered for: what the feed must hold, once each. */
interface Acknowledged {
  readonly type: Event['type'];
  readonly id: bigint;
  /** The ETag's version (a delete's answer carries none). */
  readonly version?: bigint;
}

const versionOf = (etag: string | null) => BigInt(JSON.parse(etag ?? '"-1"') as string);

// The promise of GET /events: a consumer that takes the current cursor, lists every plant, then
// applies the feed from that cursor (dropping an event older than the version it holds) ends with
// exactly the table, while writers on two replicas create, update and delete the same ids at once.
// And the feed it read while they wrote is the feed read again afterwards: no event showed up
// behind its cursor (the sequence-gap problem), none twice, none missing.
describe.skipIf(!testEngines().includes('postgres'))('a mirror kept from the feed (PostgreSQL, two replicas)', () => {
  let storage: TestStorage;
  let replicas: ServiceProcess[];
  let token: string;

  beforeAll(async () => {
    storage = await createTestStorage('postgres', { migrated: true });
    const db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir });
    token = (await db.issueToken(testToken({ name: 'mirror', scopes: ['plants:read', 'plants:write'] }))).token;
    await db.close();
    replicas = await Promise.all([startServiceProcess(storageEnv(storage)), startServiceProcess(storageEnv(storage))]);
  }, 60_000);
  afterAll(async () => {
    for (const replica of replicas ?? []) await replica.kill();
    await storage?.dispose();
  });

  const call = (replica: number, path: string, init: { method?: string; body?: string; contentType?: string } = {}) =>
    request(replicas[replica]?.url ?? '', path, { token, ...init });

  /** Every page of `first` and the ones its Links name, through one replica. */
  async function everyPage<T>(replica: number, first: string, schema: v.GenericSchema<unknown, T[]>) {
    const items: T[] = [];
    let pages = 0;
    for (let next: string | null = first; next !== null; pages++) {
      const response = await call(replica, next);
      expect(response.status).toBe(200);
      items.push(...v.parse(schema, response.body));
      const link = response.headers.get('link');
      // The Link is a query-only reference: it resolves against this page's own path.
      const target: URL | undefined =
        link === null ? undefined : new URL(/^<([^>]*)>/.exec(link)?.[1] ?? '', new URL(next, 'http://x'));
      next = target === undefined ? null : target.pathname + target.search;
    }
    return { items, pages };
  }

  it('ends with exactly the table, and read the feed in commit order while writers changed it', {
    timeout: 300_000,
  }, async () => {
    const acknowledged: Acknowledged[] = [];
    const acknowledge = (change: Acknowledged) => acknowledged.push(change);
    // Some plants before the consumer begins.
    for (let id = 1n; id <= 40n; id++) {
      const response = await call(0, '/plants', { body: `{"id":${id},"name":"seed ${id}"}` });
      expect(response.status).toBe(200);
      acknowledge({ type: 'plant.created', id, version: versionOf(response.headers.get('etag')) });
    }

    let operations = 0;
    const writer = async (replica: number, writerNumber: number) => {
      for (let step = 0; step < OPERATIONS_PER_WRITER; step++, operations++) {
        const id = BigInt(1 + Math.floor(Math.random() * ID_SPACE));
        // Every name is new: a create is never a replay, an update always changes something.
        const name = `w${writerNumber} s${step}`;
        const dice = Math.random();
        if (dice < 0.4) {
          const response = await call(replica, '/plants', {
            body: `{"id":${id},"name":"${name}","tag":"t${step % 3}"}`,
          });
          if (response.status === 200) {
            acknowledge({ type: 'plant.created', id, version: versionOf(response.headers.get('etag')) });
          } else expect(response.body).toMatchObject({ error: 409n });
        } else if (dice < 0.8) {
          const patch = step % 4 === 0 ? `{"name":"${name}","tag":null}` : `{"name":"${name}"}`;
          const response = await call(replica, `/plants/${id}`, {
            method: 'PATCH',
            body: patch,
            contentType: 'application/merge-patch+json',
          });
          if (response.status === 200) {
            acknowledge({ type: 'plant.updated', id, version: versionOf(response.headers.get('etag')) });
          } else expect(response.status).toBe(404);
        } else {
          const response = await call(replica, `/plants/${id}`, { method: 'DELETE' });
          if (response.status === 204) acknowledge({ type: 'plant.deleted', id });
          else expect(response.status).toBe(404);
        }
      }
    };
    const writers = replicas.flatMap((_, replica) =>
      Array.from({ length: WRITERS_PER_REPLICA }, (__, index) =>
        writer(replica, replica * WRITERS_PER_REPLICA + index),
      ),
    );
    let writing = true;
    const written = Promise.all(writers).finally(() => {
      writing = false;
    });

    // The consumer, on replica 1, begins once the writers are under way.
    while (operations < 100) await new Promise((resolve) => setTimeout(resolve, 10));
    const cursorAnswer = await call(1, '/events/cursor');
    const start = (cursorAnswer.body as { cursor: string }).cursor;
    const listing = await everyPage(1, '/plants?limit=37', v.array(StoredPlantSchema));
    const mirror = new Map<bigint, { plant?: StoredPlant; version: bigint }>();
    for (const plant of listing.items) mirror.set(plant.id, { plant, version: -1n });
    const applied: Event[] = [];
    let stale = 0;
    let pagesRead = 0;
    let cursor = start;
    const apply = (event: Event) => {
      applied.push(event);
      const held = mirror.get(event.data.id);
      if (held !== undefined && held.version >= event.data.version) {
        stale++;
        return;
      }
      const { version, ...plant } = event.data;
      mirror.set(event.data.id, event.type === 'plant.deleted' ? { version } : { plant, version });
    };
    const readOnce = async () => {
      const response = await call(1, `/events?limit=50&after=${cursor}`);
      expect(response.status).toBe(200);
      const events = v.parse(EventListSchema, response.body);
      pagesRead++;
      for (const event of events) apply(event);
      cursor = events.at(-1)?.cursor ?? cursor;
      return events;
    };
    while (writing) await readOnce();
    await written;
    // The writers are done: a last create, whose event comes after every one of theirs.
    const sentinel = await call(0, '/plants', { body: `{"id":${SENTINEL_ID},"name":"sentinel"}` });
    expect(sentinel.status).toBe(200);
    acknowledge({ type: 'plant.created', id: SENTINEL_ID, version: versionOf(sentinel.headers.get('etag')) });
    for (const deadline = Date.now() + 60_000; !mirror.has(SENTINEL_ID) && Date.now() < deadline; ) {
      if ((await readOnce()).length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }

    // The mirror is the table.
    const table = (await everyPage(0, '/plants?limit=100', v.array(StoredPlantSchema))).items;
    const mirrored = [...mirror.values()].flatMap((held) => (held.plant === undefined ? [] : [held.plant]));
    mirrored.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    expect(mirrored).toEqual(table);

    // The feed read again from its start holds every acknowledged change once, and what the
    // consumer read while the writers wrote is exactly its part after the consumer's cursor.
    const feed = (await everyPage(0, '/events?limit=1000', EventListSchema)).items;
    const key = (change: Acknowledged) => `${change.type} ${change.id} ${change.version ?? ''}`;
    const fromFeed = feed.map((event) =>
      key({
        type: event.type,
        id: event.data.id,
        ...(event.type === 'plant.deleted' ? {} : { version: event.data.version }),
      }),
    );
    expect(fromFeed.slice().sort()).toEqual(acknowledged.map(key).sort());
    expect(new Set(feed.map((event) => event.eventId)).size).toBe(feed.length);
    const startIndex = feed.findIndex((event) => compareCursors(event.cursor, start) > 0);
    expect(applied.map((event) => event.eventId)).toEqual(feed.slice(startIndex).map((event) => event.eventId));

    const counts = { created: 0, updated: 0, deleted: 0 };
    for (const change of acknowledged) counts[change.type.slice(6) as keyof typeof counts]++;
    console.log(
      `mirror: ${WRITERS_PER_REPLICA * 2} writers on 2 replicas acknowledged ${acknowledged.length} changes ` +
        `(${counts.created} created, ${counts.updated} updated, ${counts.deleted} deleted) over ${ID_SPACE} ids; ` +
        `the consumer took cursor ${start}, listed ${listing.items.length} plants in ${listing.pages} pages, then applied ` +
        `${applied.length} events from ${pagesRead} feed pages read while they wrote (${stale} dropped as stale by version); ` +
        `mirror of ${mirrored.length} plants compared with the table of ${table.length}: identical; ` +
        `the feed read again: ${feed.length} events, each acknowledged change once, the consumer's part in the same order`,
    );
  });
});

/** Orders two `<txid>.<seq>` cursors as the feed does. */
function compareCursors(a: string, b: string): number {
  const [aTx = 0n, aSeq = 0n] = a.split('.').map(BigInt);
  const [bTx = 0n, bSeq = 0n] = b.split('.').map(BigInt);
  return aTx !== bTx ? (aTx < bTx ? -1 : 1) : aSeq === bSeq ? 0 : aSeq < bSeq ? -1 : 1;
}
