import { createPlantStoreClient, type PlantStoreClient, PlantStoreError } from '@plant-store/client';
import { createTestStorage, type TestStorage, testEngines, testToken } from '@plant-store/db/testing';
import { INT64_MAX, INT64_MIN, type StoredPlant } from '@plant-store/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkedFetch, failOnContractViolations } from '../test-support/checked-fetch.js';
import { expectError } from '../test-support/expect-error.js';
import { request, startTestService, type TestService } from '../test-support/test-service.js';

failOnContractViolations();

/** 45 plants: both int64 ends, ids around 2^53, negatives; three tags and none. */
function storePlants(): StoredPlant[] {
  const ids = [INT64_MIN, INT64_MAX, 2n ** 53n + 1n, -(2n ** 53n + 1n), 2n ** 53n, 0n, -1n];
  for (let index = 1n; ids.length < 45; index++) ids.push(index * 1_000_003n);
  const tags = ['aroid', 'fern', 'with space & ü/?', undefined];
  return ids.map((id, index) => {
    const tag = tags[index % tags.length];
    return tag === undefined ? { id, name: `plant ${index}` } : { id, name: `plant ${index}`, tag };
  });
}

const byId = (a: StoredPlant, b: StoredPlant) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

describe.each(testEngines())('GET and DELETE /plants on %s', (engine) => {
  let storage: TestStorage;
  let service: TestService;
  let client: PlantStoreClient;
  let token: string;
  let readOnly: string;
  let writeOnly: string;
  const plants = storePlants();
  const sorted = [...plants].sort(byId);

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    service = await startTestService(storage);
    token = (await service.db.issueToken(testToken({ name: 'both', scopes: ['plants:read', 'plants:write'] }))).token;
    readOnly = (await service.db.issueToken(testToken({ name: 'reader', scopes: ['plants:read'] }))).token;
    writeOnly = (await service.db.issueToken(testToken({ name: 'writer', scopes: ['plants:write'] }))).token;
    client = createPlantStoreClient({ baseUrl: service.url, token, fetch: checkedFetch });
    for (const plant of plants) await client.createPlant(plant);
  });
  afterAll(async () => {
    await service?.close();
    await storage?.dispose();
  });

  describe('GET /plants', () => {
    it('answers the first 20 in ascending id order, exact to the last digit, with a Link to the next page', async () => {
      const response = await request(service.url, '/plants', { token });
      expect(response.status).toBe(200);
      expect(response.body).toEqual(sorted.slice(0, 20));
      expect(response.text.startsWith(`[{"id":${INT64_MIN},`)).toBe(true);
      expect(response.text).toContain(`{"id":${-(2n ** 53n + 1n)},`);
      expect(response.headers.get('link')).toBe(`<?limit=20&after=${sorted[19]?.id}>; rel="next"`);
    });

    it('walks the whole store page by page with the client, every plant once', async () => {
      const seen: StoredPlant[] = [];
      for await (const plant of client.plants({ pageSize: 7 })) seen.push(plant);
      expect(seen).toEqual(sorted);
    });

    it('walks one tag, keeping the tag in the next links (percent-encoded)', async () => {
      const tag = 'with space & ü/?';
      const seen: StoredPlant[] = [];
      for await (const plant of client.plants({ tag, pageSize: 4 })) seen.push(plant);
      expect(seen).toEqual(sorted.filter((plant) => plant.tag === tag));
      const first = await request(service.url, `/plants?limit=4&tag=${encodeURIComponent(tag)}`, { token });
      expect(first.headers.get('link')).toMatch(
        /^<\?limit=4&tag=with\+space\+%26\+%C3%BC%2F%3F&after=-?\d+>; rel="next"$/,
      );
    });

    it('answers a page exactly as large as what is left without a Link, and nothing after the last id', async () => {
      const last = await client.listPlants({ limit: 5, after: sorted[39]?.id ?? 0n });
      expect(last.plants).toEqual(sorted.slice(40));
      expect(last.next).toBeNull();
      const none = await request(service.url, `/plants?after=${INT64_MAX}`, { token });
      expect(none.text).toBe('[]');
      expect(none.headers.get('link')).toBeNull();
      expect((await request(service.url, '/plants?tag=nothing-has-this', { token })).text).toBe('[]');
    });

    it('accepts limit 1 and 100 and filters by exact tag only', async () => {
      expect((await client.listPlants({ limit: 1 })).plants).toEqual(sorted.slice(0, 1));
      expect((await client.listPlants({ limit: 100 })).plants).toEqual(sorted);
      expect((await client.listPlants({ limit: 100, tag: 'aroi' })).plants).toEqual([]);
      expect((await client.listPlants({ limit: 100, tag: '' })).plants).toEqual([]);
      const spelled = await request(service.url, '/plants?limit=100&tag=with+space+%26+%C3%BC%2F%3F', { token });
      expect(spelled.body).toEqual(sorted.filter((plant) => plant.tag === 'with space & ü/?'));
    });

    it.each([
      ['limit=0', /^limit must be an integer between 1 and 100$/],
      ['limit=101', /^limit must be an integer between 1 and 100$/],
      ['limit=-1', /^limit must be/],
      ['limit=1.5', /^limit must be/],
      ['limit=abc', /^limit must be/],
      ['limit=', /^limit must be/],
      ['limit=99999999999999999999999', /^limit must be/],
      ['limit=1&limit=2', /^query parameter limit must be given at most once$/],
      ['after=abc', /^after must be an integer between -9223372036854775808 and 9223372036854775807$/],
      ['after=9223372036854775808', /^after must be an integer/],
      ['after=-9223372036854775809', /^after must be an integer/],
      ['after=1e3', /^after must be an integer/],
      ['after=%2B1', /^after must be an integer/],
      ['after=', /^after must be an integer/],
      [`tag=${'x'.repeat(256)}`, /^tag must be a string of at most 255 characters$/],
      ['tag=a%00b', /^tag must be valid Unicode text without NUL/],
      ['tag=a&tag=b', /^query parameter tag must be given at most once$/],
      ['tag=a&tag', /^query parameter tag must be given at most once$/],
      ['tag=%C0%AF', /^query parameter tag is not valid percent-encoded UTF-8$/],
      ['tag=%E0%A4%A', /^query parameter tag is not valid percent-encoded UTF-8$/],
      ['after=%', /^query parameter after is not valid percent-encoded UTF-8$/],
    ])('refuses %s with 400 in the Error shape', async (query, message) => {
      expectError(await request(service.url, `/plants?${query}`, { token }), 400, message);
    });

    it('ignores query parameters it does not know, even badly encoded ones', async () => {
      const response = await request(service.url, '/plants?limit=2&colour=green&%C0=%C0&&', { token });
      expect(response.body).toEqual(sorted.slice(0, 2));
    });

    it('needs the plants:read scope', async () => {
      const missing = await request(service.url, '/plants');
      expectError(missing, 401);
      expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="plant-store"');
      const forbidden = await request(service.url, '/plants', { token: writeOnly });
      expectError(forbidden, 403, 'this token lacks the plants:read scope');
      expect(forbidden.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    });
  });

  describe('GET /plants/{id}', () => {
    it.each([
      ['int64 min', INT64_MIN],
      ['int64 max', INT64_MAX],
      ['2^53 + 1', 2n ** 53n + 1n],
      ['-(2^53 + 1)', -(2n ** 53n + 1n)],
    ])('answers the plant at %s exactly', async (_label, id) => {
      const expected = plants.find((plant) => plant.id === id);
      expect(await client.getPlant(id)).toEqual(expected);
      const response = await request(service.url, `/plants/${id}`, { token: readOnly });
      expect(response.status).toBe(200);
      expect(response.text.startsWith(`{"id":${id},`)).toBe(true);
    });

    it('answers an unknown id with 404, surfaced by the client as a typed error', async () => {
      const error = await client.getPlant(2n ** 53n + 7n).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(PlantStoreError);
      expect(error).toMatchObject({ status: 404, error: 404, message: `no plant with id ${2n ** 53n + 7n}` });
      expectError(await request(service.url, '/plants/12345', { token }), 404, 'no plant with id 12345');
    });

    it.each([
      'abc',
      '1.5',
      '1e3',
      '0x10',
      '+1',
      '%201',
      '9223372036854775808',
      '-9223372036854775809',
      '99999999999999999999999999999999',
      '%E0%A4%A',
    ])('refuses the path id %s with 400', async (id) => {
      expectError(
        await request(service.url, `/plants/${id}`, { token }),
        400,
        /^id must be an integer between -9223372036854775808 and 9223372036854775807$/,
      );
    });

    it('needs the plants:read scope', async () => {
      expectError(await request(service.url, '/plants/1', {}), 401);
      expectError(await request(service.url, '/plants/1', { token: writeOnly }), 403);
    });
  });

  describe('DELETE /plants/{id}', () => {
    it('answers 204 without a body, then the plant is gone and a second delete answers 404', async () => {
      const id = 2n ** 53n + 1n;
      const response = await request(service.url, `/plants/${id}`, { method: 'DELETE', token });
      expect(response.status).toBe(204);
      expect(response.text).toBe('');
      expect(await service.db.findPlant(id)).toBeNull();
      expectError(await request(service.url, `/plants/${id}`, { token }), 404);
      const again = await client.deletePlant(id).catch((caught: unknown) => caught);
      expect(again).toBeInstanceOf(PlantStoreError);
      expect(again).toMatchObject({ status: 404, error: 404 });
    });

    it('frees the id: it can be created again, with other content', async () => {
      const id = INT64_MAX;
      await client.deletePlant(id);
      expect(await client.createPlant({ id, name: 'Reborn' })).toEqual({ id, name: 'Reborn' });
      expect(await client.getPlant(id)).toEqual({ id, name: 'Reborn' });
    });

    it('refuses a path id that is not an int64 with 400 and deletes nothing', async () => {
      const before = (await client.listPlants({ limit: 100 })).plants;
      expectError(await request(service.url, '/plants/1.0', { method: 'DELETE', token }), 400);
      expectError(await request(service.url, `/plants/${INT64_MAX + 1n}`, { method: 'DELETE', token }), 400);
      expect((await client.listPlants({ limit: 100 })).plants).toEqual(before);
    });

    it('needs the plants:write scope', async () => {
      expectError(await request(service.url, '/plants/0', { method: 'DELETE' }), 401);
      expectError(await request(service.url, '/plants/0', { method: 'DELETE', token: readOnly }), 403);
      expect(await service.db.findPlant(0n)).not.toBeNull();
    });

    it('lets exactly one of 20 concurrent deletes of one id succeed', async () => {
      const id = -1n;
      const statuses = await Promise.all(
        Array.from({ length: 20 }, () =>
          request(service.url, `/plants/${id}`, { method: 'DELETE', token }).then((response) => response.status),
        ),
      );
      expect(statuses.filter((status) => status === 204)).toHaveLength(1);
      expect(statuses.filter((status) => status === 404)).toHaveLength(19);
    });
  });
});
