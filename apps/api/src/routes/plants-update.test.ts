import { createTestStorage, type TestStorage, testEngines, testToken } from '@plant-store/db/testing';
import { INT64_MAX } from '@plant-store/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failOnContractViolations } from '../test-support/checked-fetch.js';
import { expectError } from '../test-support/expect-error.js';
import { request, startTestService, type TestResponse, type TestService } from '../test-support/test-service.js';
import { waitUntil } from '../test-support/wait-until.js';

failOnContractViolations();

const MERGE_PATCH = 'application/merge-patch+json';

/** The version an ETag names (a strong tag, its decimal). */
function versionOf(response: TestResponse): bigint {
  const etag = response.headers.get('etag');
  expect(etag).toMatch(/^"[0-9]+"$/);
  return BigInt(etag?.slice(1, -1) ?? '');
}

describe.each(testEngines())('PATCH /plants/{id}, ETag and preconditions on %s', (engine) => {
  let storage: TestStorage;
  let service: TestService;
  let writer: string;
  let reader: string;
  let auditor: string;
  let nextId = 1000n;

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    service = await startTestService(storage);
    const scopes = ['plants:read', 'plants:write'] as const;
    writer = (await service.db.issueToken(testToken({ name: 'writer', scopes: [...scopes] }))).token;
    reader = (await service.db.issueToken(testToken({ name: 'reader', scopes: ['plants:read'] }))).token;
    auditor = (await service.db.issueToken(testToken({ name: 'auditor', scopes: ['tokens:manage'] }))).token;
  });
  afterAll(async () => {
    await service?.close();
    await storage?.dispose();
  });

  const create = async (body: string) => {
    const response = await request(service.url, '/plants', { body, token: writer });
    expect(response.status).toBe(200);
    return response;
  };
  /** A new plant of its own for each test: `{"id": <fresh>, ...fields}`. */
  const fresh = async (fields = '"name":"Monstera","tag":"aroid"') => {
    const id = nextId++;
    const response = await create(`{"id":${id},${fields}}`);
    return { id, version: versionOf(response) };
  };
  const patch = (
    id: bigint | string,
    body: string,
    options: { contentType?: string; headers?: Record<string, string>; token?: string } = {},
  ) =>
    request(service.url, `/plants/${id}`, {
      method: 'PATCH',
      body,
      token: options.token ?? writer,
      contentType: options.contentType ?? MERGE_PATCH,
      headers: options.headers ?? {},
    });
  const get = (id: bigint | string, headers: Record<string, string> = {}) =>
    request(service.url, `/plants/${id}`, { token: reader, headers });
  const remove = (id: bigint, headers: Record<string, string> = {}) =>
    request(service.url, `/plants/${id}`, { method: 'DELETE', token: writer, headers });

  describe('a merge patch of name and tag', () => {
    it('renames, keeps what is absent, answers the plant with a new ETag, and GET sees it', async () => {
      const { id, version } = await fresh();
      const renamed = await patch(id, '{"name":"Swiss cheese plant"}');
      expect(renamed.status).toBe(200);
      expect(renamed.text).toBe(`{"id":${id},"name":"Swiss cheese plant","tag":"aroid"}`);
      expect(versionOf(renamed)).toBeGreaterThan(version);
      const read = await get(id);
      expect(read.text).toBe(renamed.text);
      expect(read.headers.get('etag')).toBe(renamed.headers.get('etag'));
    });

    it('removes the tag with "tag": null, sets one, and takes application/json as well', async () => {
      const { id } = await fresh();
      expect((await patch(id, '{"tag":null}')).text).toBe(`{"id":${id},"name":"Monstera"}`);
      const tagged = await patch(id, '{"tag":"climber","name":"M. deliciosa"}', { contentType: 'application/json' });
      expect(tagged.status).toBe(200);
      expect(tagged.text).toBe(`{"id":${id},"name":"M. deliciosa","tag":"climber"}`);
    });

    it('writes nothing for a patch that changes nothing: the same version, no event', async () => {
      const { id, version } = await fresh();
      const before = await service.db.currentEventCursor();
      for (const body of ['{}', '{"name":"Monstera"}', `{"id":${id},"tag":"aroid","colour":"green"}`]) {
        const same = await patch(id, body);
        expect(same.status).toBe(200);
        expect(same.text).toBe(`{"id":${id},"name":"Monstera","tag":"aroid"}`);
        expect(versionOf(same)).toBe(version);
      }
      // Then one change: once the feed shows it (it may lag the answer), it is the plant's only
      // update. (Events of earlier tests may follow the cursor too: it promises only that nothing
      // listed later comes before it.)
      await patch(id, '{"name":"Changed"}');
      let updates: Array<{ type: string; data: { id: bigint } }> = [];
      await waitUntil(
        async () => {
          const page = await request(service.url, `/events?after=${before}&type=plant.updated&limit=1000`, {
            token: reader,
          });
          updates = (page.body as typeof updates).filter((event) => event.data.id === id);
          return updates.length > 0;
        },
        30_000,
        20,
      );
      expect(updates.map((event) => event.data)).toEqual([
        { id, name: 'Changed', tag: 'aroid', version: expect.any(BigInt) },
      ]);
    });

    it('keeps an int64 id exact at both ends', async () => {
      await create(`{"id":${INT64_MAX},"name":"Largest"}`);
      const response = await patch(INT64_MAX, `{"id":${INT64_MAX},"tag":"end"}`);
      expect(response.text).toBe(`{"id":${INT64_MAX},"name":"Largest","tag":"end"}`);
      const near = 2n ** 53n + 1n;
      await create(`{"id":${near},"name":"Past doubles"}`);
      expect((await patch(near, '{"name":"Still exact"}')).text).toBe(`{"id":${near},"name":"Still exact"}`);
      expect((await patch(near - 1n, '{"name":"Absent"}')).status).toBe(404);
    });

    it('answers 404 in the Error shape for an absent plant, and 403 to a token without plants:write', async () => {
      expectError(await patch(999_999_999n, '{"name":"Nobody"}'), 404, 'no plant with id 999999999');
      const { id } = await fresh();
      expectError(await patch(id, '{"name":"Reader"}', { token: reader }), 403, /plants:write/);
      expect((await get(id)).text).toBe(`{"id":${id},"name":"Monstera","tag":"aroid"}`);
    });
  });

  describe('refused patches: the rules and messages of POST /plants, the status as the code, nothing written', () => {
    /** The message POST /plants gives for the same fault (its status is 400 whatever the code). */
    const createMessage = async (body: string) => {
      const response = await request(service.url, '/plants', { body, token: writer });
      expect(response.status).toBe(400);
      return (response.body as { message: string }).message;
    };

    it.each([
      ['an empty name', '{"name":""}', `{"id":1,"name":""}`],
      ['a name too long', `{"name":"${'x'.repeat(256)}"}`, `{"id":1,"name":"${'x'.repeat(256)}"}`],
      ['a tag too long', `{"tag":"${'x'.repeat(256)}"}`, `{"id":1,"name":"n","tag":"${'x'.repeat(256)}"}`],
      ['a name that is a number', '{"name":5}', '{"id":1,"name":5}'],
      ['a lone surrogate', '{"name":"\\ud800"}', '{"id":1,"name":"\\ud800"}'],
      ['a NUL', '{"name":"a\\u0000b"}', '{"id":1,"name":"a\\u0000b"}'],
      ['an array', '[]', '[]'],
      ['malformed JSON', '{"name":', '{"name":'],
    ])('%s', async (_label, body, asCreate) => {
      const { id } = await fresh();
      const response = await patch(id, body);
      expectError(response, 400, await createMessage(asCreate));
      expect((await get(id)).text).toBe(`{"id":${id},"name":"Monstera","tag":"aroid"}`);
    });

    it('refuses "name": null (a plant has a name) and an id that is not the path\'s', async () => {
      const { id } = await fresh();
      expectError(await patch(id, '{"name":null}'), 400, /name/);
      expectError(
        await patch(id, `{"id":${id + 1n},"name":"Moved"}`),
        400,
        `id cannot change: the body's id ${id + 1n} is not the path's ${id}`,
      );
      expectError(await patch(id, '{"id":"1"}'), 400, /id/);
      expectError(await patch('12x', '{"name":"x"}'), 400, /id/);
      expect((await get(id)).text).toBe(`{"id":${id},"name":"Monstera","tag":"aroid"}`);
    });

    it('answers 415 for a body that is not JSON, naming the media types it takes', async () => {
      const { id } = await fresh();
      expectError(
        await patch(id, 'name=x', { contentType: 'application/x-www-form-urlencoded' }),
        415,
        /application\/merge-patch\+json/,
      );
      expectError(await patch(id, '{"name":"x"}', { contentType: 'text/plain' }), 415);
    });

    it('answers 413 for a body over the limit', async () => {
      const { id } = await fresh();
      expectError(await patch(id, `{"name":"${'x'.repeat(2 * 1024 * 1024)}"}`), 413);
    });
  });

  describe('versions and ETags', () => {
    it('puts an ETag on POST, GET and PATCH, and never gives an id a version twice, across a delete and a re-create', async () => {
      const { id, version: first } = await fresh();
      const seen = [first];
      seen.push(versionOf(await patch(id, '{"name":"Two"}')));
      expect(versionOf(await get(id))).toBe(seen.at(-1));
      expect((await remove(id)).status).toBe(204);
      const again = await create(`{"id":${id},"name":"Monstera","tag":"aroid"}`);
      seen.push(versionOf(again));
      seen.push(versionOf(await patch(id, '{"name":"Three"}')));
      expect(new Set(seen).size).toBe(seen.length);
      expect([...seen].sort((a, b) => (a < b ? -1 : 1))).toEqual(seen);
    });

    it('answers an identical replay of the create with the stored plant and its ETag, and a replay after an update with 409', async () => {
      const body = '"name":"Replay","tag":"r"';
      const { id, version } = await fresh(body);
      const replay = await create(`{"id":${id},${body}}`);
      expect(versionOf(replay)).toBe(version);
      await patch(id, '{"tag":"changed"}');
      const conflict = await request(service.url, '/plants', { body: `{"id":${id},${body}}`, token: writer });
      expect(conflict.status).toBe(400);
      expect(conflict.body).toMatchObject({ error: 409n });
    });
  });

  describe('If-Match on PATCH and DELETE, If-None-Match on GET', () => {
    it('changes only while the plant has a version If-Match names, and answers 412 with the current ETag otherwise', async () => {
      const { id, version } = await fresh();
      const stale = `"${version}"`;
      const changed = await patch(id, '{"name":"First"}', { headers: { 'If-Match': `"1", ${stale}` } });
      expect(changed.status).toBe(200);
      const current = changed.headers.get('etag') ?? '';
      const refused = await patch(id, '{"name":"Lost update"}', { headers: { 'If-Match': stale } });
      expectError(refused, 412, `plant ${id} has version ${current}, none of those If-Match names`);
      expect(refused.headers.get('etag')).toBe(current);
      // A weak tag never matches for a change (strong comparison).
      expectError(await patch(id, '{"name":"Weak"}', { headers: { 'If-Match': `W/${current}` } }), 412);
      expect((await patch(id, '{"name":"Any"}', { headers: { 'If-Match': '*' } })).status).toBe(200);
      expect((await get(id)).body).toEqual({ id, name: 'Any', tag: 'aroid' });
    });

    it('deletes only while the plant has a version If-Match names', async () => {
      const { id, version } = await fresh();
      const newer = versionOf(await patch(id, '{"name":"Newer"}'));
      const refused = await remove(id, { 'If-Match': `"${version}"` });
      expectError(refused, 412);
      expect(refused.headers.get('etag')).toBe(`"${newer}"`);
      expect((await get(id)).status).toBe(200);
      expect((await remove(id, { 'If-Match': `"${newer}"` })).status).toBe(204);
      expectError(await remove(id, { 'If-Match': `"${newer}"` }), 404);
    });

    it('answers 404, not 412, for an absent plant under If-Match, and 400 for a header that is no entity tag', async () => {
      expectError(await patch(888_888_888n, '{"name":"x"}', { headers: { 'If-Match': '"1"' } }), 404);
      const { id } = await fresh();
      expectError(await patch(id, '{"name":"x"}', { headers: { 'If-Match': 'version-1' } }), 400, /If-Match/);
    });

    it('tags the string form of int64s apart (its bytes differ), and takes either tag in If-Match', async () => {
      const { id, version } = await fresh();
      const strings = { 'Plant-Store-Int64': 'string' };
      const read = await get(id, strings);
      expect(read.text).toBe(`{"id":"${id}","name":"Monstera","tag":"aroid"}`);
      expect(read.headers.get('etag')).toBe(`"${version}-string"`);
      expect((await get(id, { ...strings, 'If-None-Match': `"${version}-string"` })).status).toBe(304);
      expect((await get(id, { ...strings, 'If-None-Match': `"${version}"` })).status).toBe(200);
      expect((await get(id, { 'If-None-Match': `"${version}-string"` })).status).toBe(200);
      const changed = await patch(id, '{"name":"Strung"}', {
        headers: { ...strings, 'If-Match': `"${version}-string"` },
      });
      expect(changed.status).toBe(200);
      const newer = changed.headers.get('etag') ?? '';
      expect(newer).toMatch(/^"[0-9]+-string"$/);
      expect((await patch(id, '{"name":"Plain"}', { headers: { 'If-Match': newer } })).status).toBe(200);
    });

    it('answers GET with 304 and no body while If-None-Match names the current version, 200 once it changed', async () => {
      const { id, version } = await fresh();
      const notModified = await get(id, { 'If-None-Match': `"${version}"` });
      expect(notModified.status).toBe(304);
      expect(notModified.text).toBe('');
      expect(notModified.headers.get('etag')).toBe(`"${version}"`);
      expect((await get(id, { 'If-None-Match': `W/"${version}"` })).status).toBe(304);
      expect((await get(id, { 'If-None-Match': '*' })).status).toBe(304);
      await patch(id, '{"name":"Changed"}');
      const modified = await get(id, { 'If-None-Match': `"${version}"` });
      expect(modified.status).toBe(200);
      expect(modified.body).toEqual({ id, name: 'Changed', tag: 'aroid' });
    });
  });

  it("records updates and deletes (with a precondition too) in the acting team's audit log, with the token that did them", async () => {
    const { id, version } = await fresh();
    const etag = (await patch(id, '{"name":"Audited"}')).headers.get('etag') ?? '';
    // A delete its precondition refused did not happen: nothing recorded.
    expectError(await remove(id, { 'If-Match': `"${version}"` }), 412);
    expect((await remove(id, { 'If-Match': etag })).status).toBe(204);
    const log = await request(service.url, '/audit-events?limit=200', { token: auditor });
    const actions = (log.body as Array<{ action: string; target: string; actor: { name: string } }>)
      .filter((event) => event.target === id.toString())
      .map((event) => [event.action, event.actor.name]);
    expect(actions).toEqual([
      ['plant.updated', 'writer'],
      ['plant.deleted', 'writer'],
    ]);
  });
});
