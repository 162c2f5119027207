import { createPlantStoreClient, PlantStoreError } from '@plant-store/client';
import { createTestStorage, type TestStorage, testEngines, testToken } from '@plant-store/db/testing';
import { type Event, EventListSchema, INT64_MAX, INT64_MIN } from '@plant-store/schema';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkedFetch, failOnContractViolations } from '../test-support/checked-fetch.js';
import { expectError } from '../test-support/expect-error.js';
import { request, startTestService, type TestService } from '../test-support/test-service.js';
import { waitUntil } from '../test-support/wait-until.js';

failOnContractViolations();

describe.each(testEngines())('GET /events and GET /events/cursor on %s', (engine) => {
  let storage: TestStorage;
  let service: TestService;
  let writer: string;
  let reader: string;

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    service = await startTestService(storage);
    writer = (await service.db.issueToken(testToken({ name: 'writer', scopes: ['plants:write'] }))).token;
    reader = (await service.db.issueToken(testToken({ name: 'reader', scopes: ['plants:read'] }))).token;
  });
  afterAll(async () => {
    await service?.close();
    await storage?.dispose();
  });

  const write = async (method: string, path: string, body?: string) => {
    const response = await request(service.url, path, {
      method,
      token: writer,
      ...(body === undefined ? {} : { body }),
      ...(method === 'PATCH' ? { contentType: 'application/merge-patch+json' } : {}),
    });
    expect(response.status).toBeLessThan(300);
    return response.headers.get('etag');
  };
  const cursorNow = async () => {
    const response = await request(service.url, '/events/cursor', { token: reader });
    expect(response.status).toBe(200);
    return (response.body as { cursor: string }).cursor;
  };
  const page = async (query: string) => {
    const response = await request(service.url, `/events${query}`, { token: reader });
    expect(response.status).toBe(200);
    return { events: v.parse(EventListSchema, response.body), link: response.headers.get('link'), text: response.text };
  };
  /** Follows the Link headers from `query` to the end: every event after it, in order. */
  const everyEvent = async (query: string) => {
    const events: Event[] = [];
    let next: string | null = query;
    while (next !== null) {
      const answer = await page(next);
      events.push(...answer.events);
      next = answer.link === null ? null : (/^<(\?[^>]*)>; rel="next"$/.exec(answer.link)?.[1] ?? null);
    }
    return events;
  };

  /**
   * Every event after `query` once there are `count`: the feed shows an event once every
   * transaction that could commit before it has ended (on PostgreSQL, any writing transaction of
   * the cluster, another test's included), so it may lag a write's answer.
   */
  const settled = async (query: string, count: number) => {
    let events: Event[] = [];
    await waitUntil(
      async () => {
        events = await everyEvent(query);
        return events.length >= count;
      },
      30_000,
      20,
    );
    return events;
  };

  it('lists every change in commit order, with the version each ETag gave, ids exact, page by page with Link', async () => {
    const start = await cursorNow();
    const tags: string[] = [];
    tags.push((await write('POST', '/plants', `{"id":${INT64_MAX},"name":"Largest","tag":"end"}`)) ?? '');
    tags.push((await write('POST', '/plants', `{"id":${INT64_MIN},"name":"Smallest"}`)) ?? '');
    tags.push((await write('PATCH', `/plants/${INT64_MAX}`, '{"tag":null,"name":"Renamed"}')) ?? '');
    await write('DELETE', `/plants/${INT64_MIN}`);
    await settled(`?after=${start}`, 4);

    const first = await page(`?limit=3&after=${start}`);
    expect(first.events.map((event) => event.type)).toEqual(['plant.created', 'plant.created', 'plant.updated']);
    expect(first.link).toBe(`<?limit=3&after=${first.events[2]?.cursor}>; rel="next"`);
    expect(first.text).toContain(`"id":${INT64_MIN},`);
    expect(first.events.map((event) => event.data)).toEqual([
      { id: INT64_MAX, name: 'Largest', tag: 'end', version: BigInt(JSON.parse(tags[0] ?? '')) },
      { id: INT64_MIN, name: 'Smallest', version: BigInt(JSON.parse(tags[1] ?? '')) },
      { id: INT64_MAX, name: 'Renamed', version: BigInt(JSON.parse(tags[2] ?? '')) },
    ]);
    const rest = await page(`?limit=3&after=${first.events[2]?.cursor}`);
    // A delete carries the plant as it was, with the version it had.
    expect(rest.events.map(({ type, data }) => ({ type, data }))).toEqual([
      { type: 'plant.deleted', data: { id: INT64_MIN, name: 'Smallest', version: expect.any(BigInt) } },
    ]);
    // Its version is the deletion's own, above every one the plant had.
    expect(rest.events[0]?.data.version).toBeGreaterThan(BigInt(JSON.parse(tags[2] ?? '')));
    expect(rest.link).toBeNull();
    // Each event once, its own id and cursor; the cursors ascend.
    const all = await everyEvent(`?limit=1&after=${start}`);
    expect(all).toEqual([...first.events, ...rest.events]);
    expect(new Set(all.map((event) => event.eventId)).size).toBe(4);
    expect(await page(`?after=${all.at(-1)?.cursor}`)).toMatchObject({ events: [], link: null });
    expect(await cursorNow()).not.toBe(start);
  });

  it('lists one type alone with type, and keeps it in the next Link', async () => {
    const start = await cursorNow();
    for (const id of [11, 12, 13]) await write('POST', '/plants', `{"id":${id},"name":"P${id}"}`);
    for (const id of [11, 12, 13]) await write('PATCH', `/plants/${id}`, '{"tag":"t"}');
    await settled(`?after=${start}`, 6);
    const updates = await page(`?after=${start}&type=plant.updated&limit=2`);
    expect(updates.events.map((event) => [event.type, event.data.id])).toEqual([
      ['plant.updated', 11n],
      ['plant.updated', 12n],
    ]);
    expect(updates.link).toBe(`<?limit=2&after=${updates.events[1]?.cursor}&type=plant.updated>; rel="next"`);
    const everyUpdate = await everyEvent(`?after=${start}&type=plant.updated&limit=2`);
    expect(everyUpdate.map((event) => event.data.id)).toEqual([11n, 12n, 13n]);
  });

  it('starts from the oldest event kept without after, and the cursor of an empty feed is a place before every event', async () => {
    const all = await everyEvent('?limit=1000');
    expect(all.length).toBeGreaterThan(0);
    expect(all[0]?.type).toBe('plant.created');
  });

  it('refuses what is not a query of the feed with 400, and a token without plants:read with 403', async () => {
    expectError(await request(service.url, '/events?after=12', { token: reader }), 400, /after must be a cursor/);
    expectError(await request(service.url, '/events?after=1.2.3', { token: reader }), 400, /after/);
    expectError(await request(service.url, `/events?after=${2n ** 64n}.0`, { token: reader }), 400, /after/);
    expectError(
      await request(service.url, '/events?type=plant.renamed', { token: reader }),
      400,
      /type must be one of/,
    );
    expectError(await request(service.url, '/events?limit=0', { token: reader }), 400, /limit/);
    expectError(await request(service.url, '/events?limit=1001', { token: reader }), 400, /limit/);
    expectError(await request(service.url, '/events', { token: writer }), 403, /plants:read/);
    expectError(await request(service.url, '/events/cursor', { token: writer }), 403, /plants:read/);
    expectError(await request(service.url, '/events'), 401);
  });

  it('is followed by the published client: changes under ifMatch, then the events after a cursor, live', async () => {
    const both = (await service.db.issueToken(testToken({ name: 'client', scopes: ['plants:read', 'plants:write'] })))
      .token;
    const client = createPlantStoreClient({ baseUrl: service.url, token: both, fetch: checkedFetch });
    const start = await client.getEventCursor();
    const id = 2n ** 63n - 2n;
    await client.createPlant({ id, name: 'Client fern' });
    const { version } = await client.getVersionedPlant(id);
    const updated = await client.updatePlant(id, { tag: 'shade' }, { ifMatch: version });
    expect(updated.plant).toEqual({ id, name: 'Client fern', tag: 'shade' });
    const stale = await client.updatePlant(id, { tag: 'sun' }, { ifMatch: version }).catch((error: unknown) => error);
    expect(stale).toBeInstanceOf(PlantStoreError);
    expect(stale).toMatchObject({ status: 412, error: 412 });
    await client.deletePlant(id, { ifMatch: updated.version });

    // Followed live from the cursor: the three changes, then aborted.
    const controller = new AbortController();
    const seen: Array<[string, bigint]> = [];
    const following = (async () => {
      for await (const event of client.events({ after: start, follow: true, pollMs: 20, signal: controller.signal })) {
        if (event.data.id !== id) continue;
        seen.push([event.type, event.data.version]);
        if (seen.length === 3) controller.abort();
      }
    })().catch((error: unknown) => error);
    expect(await following).toMatchObject({ kind: 'aborted' });
    expect(seen.map(([type]) => type)).toEqual(['plant.created', 'plant.updated', 'plant.deleted']);
    expect(seen[1]?.[1]).toBe(updated.version);
    expect(seen[2]?.[1]).toBeGreaterThan(updated.version);
  });

  it('answers 410 in the Error shape for a cursor older than the events kept, and the feed goes on from the horizon', async () => {
    const old = await cursorNow();
    await write('POST', '/plants', '{"id":21,"name":"Gone soon"}');
    const before = { events: await settled(`?after=${old}`, 1) };
    expect(before.events).toHaveLength(1);
    const deleted = await service.db.deleteOldWebhookData({ olderThanMs: 0, batchSize: 10_000 });
    expect(deleted.events).toBeGreaterThan(0);
    expectError(await request(service.url, `/events?after=${old}`, { token: reader }), 410, /no longer kept/);
    // The cursor of the last event deleted is not older than what is kept: nothing is missing after it.
    expect(await page(`?after=${before.events[0]?.cursor}`)).toMatchObject({ events: [] });
    await write('PATCH', '/plants/21', '{"name":"Still here"}');
    expect((await settled(`?after=${before.events[0]?.cursor}`, 1)).map((event) => event.data.name)).toEqual([
      'Still here',
    ]);
    expect((await page('')).events.map((event) => event.data.name)).toEqual(['Still here']);
  });
});
