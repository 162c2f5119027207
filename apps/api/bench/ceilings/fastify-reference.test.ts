/**
 * The bench's Fastify reference answers what the contract answers on the paths the bench measures:
 * started as the bench starts it (its own process, a real port) on a migrated PostgreSQL database.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestStorage, type TestStorage, waitUntil } from '@plant-store/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpCeiling, startFastifyReference } from '../ceiling-process.js';

const TOKEN = `pst_${'r'.repeat(43)}`;
const API_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HAS_POSTGRES = Boolean(process.env.TEST_DATABASE_URL);
if (!HAS_POSTGRES) console.warn('fastify-reference.test.ts: skipped, set TEST_DATABASE_URL to run it on PostgreSQL');

/** Past 2^53: JSON.parse would round it. */
const BIG_ID = 2n ** 62n + 1n;

describe.skipIf(!HAS_POSTGRES)('the Fastify reference on PostgreSQL', () => {
  let storage: TestStorage;
  let logDir: string;
  let reference: HttpCeiling;

  beforeAll(async () => {
    storage = await createTestStorage('postgres', { migrated: true });
    logDir = await mkdtemp(join(tmpdir(), 'fastify-reference-test-'));
    reference = await startFastifyReference(
      { engine: 'postgres', url: storage.databaseUrl ?? '', poolSize: 4 },
      TOKEN,
      { apiRoot: API_ROOT, env: { PATH: process.env.PATH ?? '' }, logFile: join(logDir, 'reference.log') },
    );
  });

  afterAll(async () => {
    await reference?.stop();
    await storage?.dispose();
    if (logDir) await rm(logDir, { recursive: true, force: true });
  });

  const call = async (method: string, path: string, body?: string, authorization = `Bearer ${TOKEN}`) => {
    const headers: Record<string, string> = authorization === '' ? {} : { authorization };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${reference.url}${path}`, { method, headers, ...(body ? { body } : {}) });
    return { response, text: await response.text() };
  };

  it('creates a plant with an exact id, and refuses an invalid body and a bad token', async () => {
    const created = await call('POST', '/plants', `{"id":${BIG_ID},"name":"Monstera","tag":"aroid","extra":1}`);
    expect(created.response.status).toBe(200);
    expect(created.text).toBe(`{"id":${BIG_ID},"name":"Monstera","tag":"aroid"}`);
    expect(created.response.headers.get('etag')).toMatch(/^"\d+"$/);
    expect(created.response.headers.get('content-type')).toBe('application/json; charset=utf-8');

    const invalid = await call('POST', '/plants', '{"id":7,"name":""}');
    expect(invalid.response.status).toBe(400);
    expect(JSON.parse(invalid.text)).toEqual({ error: 400, message: 'name must be a string of 1 to 255 characters' });
    expect(JSON.parse((await call('POST', '/plants', '{"name":"x"}')).text).message).toBe('id is required');
    expect(JSON.parse((await call('POST', '/plants', '{"id":9223372036854775808,"name":"x"}')).text).message).toBe(
      'id must be an integer between -9223372036854775808 and 9223372036854775807',
    );

    const badToken = await call('POST', '/plants', '{"id":8,"name":"x"}', `Bearer pst_${'x'.repeat(43)}`);
    expect(badToken.response.status).toBe(401);
    expect(badToken.response.headers.get('www-authenticate')).toBe('Bearer realm="plant-store", error="invalid_token"');
    expect(JSON.parse(badToken.text)).toEqual({
      error: 401,
      message: 'the bearer token is invalid or has been revoked',
    });
  });

  it('reads by id, pages with and without a tag, and answers 404 for an unknown id', async () => {
    for (const [id, tag] of [
      [11, 'fern'],
      [12, undefined],
      [13, 'fern'],
    ] as const) {
      const body = JSON.stringify(tag === undefined ? { id, name: `Plant ${id}` } : { id, name: `Plant ${id}`, tag });
      expect((await call('POST', '/plants', body)).response.status).toBe(200);
    }
    const read = await call('GET', `/plants/${BIG_ID}`);
    expect(read.response.status).toBe(200);
    expect(read.text).toBe(`{"id":${BIG_ID},"name":"Monstera","tag":"aroid"}`);
    const missing = await call('GET', '/plants/404');
    expect(missing.response.status).toBe(404);
    expect(JSON.parse(missing.text)).toEqual({ error: 404, message: 'no plant with id 404' });

    const page = await call('GET', '/plants?limit=2&after=10');
    expect(page.response.status).toBe(200);
    expect(page.text).toBe('[{"id":11,"name":"Plant 11","tag":"fern"},{"id":12,"name":"Plant 12"}]');
    expect(page.response.headers.get('link')).toBe('<?limit=2&after=12>; rel="next"');
    const tagged = await call('GET', '/plants?limit=20&tag=fern&after=10');
    expect(tagged.text).toBe('[{"id":11,"name":"Plant 11","tag":"fern"},{"id":13,"name":"Plant 13","tag":"fern"}]');
    expect(tagged.response.headers.get('link')).toBeNull();
    const badLimit = await call('GET', '/plants?limit=0');
    expect(JSON.parse(badLimit.text)).toEqual({ error: 400, message: 'limit must be an integer between 1 and 100' });
  });

  it('changes a plant, and lists its events in the feed', async () => {
    const changed = await call('PATCH', '/plants/12', '{"name":"Renamed","tag":"moss"}');
    expect(changed.response.status).toBe(200);
    expect(changed.text).toBe('{"id":12,"name":"Renamed","tag":"moss"}');
    expect((await call('PATCH', '/plants/404', '{"name":"x"}')).response.status).toBe(404);

    // A page lists the events of transactions older than every one still running on the server,
    // which other suites share: waited for, not assumed.
    let events: Array<{ cursor: string; type: string; data: { id: number; name: string } }> = [];
    await waitUntil(
      async () => {
        const feed = await call('GET', '/events?limit=100');
        expect(feed.response.status).toBe(200);
        events = JSON.parse(feed.text);
        return events.some((event) => event.type === 'plant.updated');
      },
      50_000,
      100,
    );
    expect(events.filter((event) => event.data.id === 12).map((event) => [event.type, event.data.name])).toEqual([
      ['plant.created', 'Plant 12'],
      ['plant.updated', 'Renamed'],
    ]);
    const [first] = events;
    const next = await call('GET', `/events?limit=1&after=${first?.cursor}`);
    expect(next.response.status).toBe(200);
    expect(JSON.parse(next.text)).toHaveLength(1);
    const badCursor = await call('GET', '/events?after=x');
    expect(JSON.parse(badCursor.text).message).toBe('after must be a cursor the feed gave (digits, a dot, digits)');
  });
});
