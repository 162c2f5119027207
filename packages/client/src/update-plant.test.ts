import { INT64_MAX } from '@plant-store/schema';
import { afterEach, describe, expect, it } from 'vitest';
import { closeScriptedServers, errorAnswer, json, startScriptedServer } from './test-support/scripted-server.js';
import { caught, createTestClient } from './test-support/test-client.js';

afterEach(closeScriptedServers);

describe('updatePlant, getVersionedPlant and deletePlant with ifMatch', () => {
  it('sends a merge patch with the id exact, and returns the plant with the version its ETag names', async () => {
    const server = await startScriptedServer([
      json(200, `{"id":${INT64_MAX},"name":"Fern"}`, { ETag: '"9007199254740993"' }),
    ]);
    const updated = await createTestClient(server.url).updatePlant(INT64_MAX, { name: 'Fern', tag: null });
    expect(updated).toStrictEqual({ plant: { id: INT64_MAX, name: 'Fern' }, version: 9007199254740993n });
    expect(server.requests.map(({ method, url, body }) => [method, url, body])).toEqual([
      ['PATCH', `/plants/${INT64_MAX}`, '{"name":"Fern","tag":null}'],
    ]);
    expect(server.requests[0]?.headers['if-match']).toBeUndefined();
  });

  it('sends If-Match with ifMatch, and throws the 412 without retrying', async () => {
    const server = await startScriptedServer([
      errorAnswer(412, 412, 'plant 7 has version "12", none of those If-Match names'),
    ]);
    const error = await caught(createTestClient(server.url).updatePlant(7n, { name: 'Late' }, { ifMatch: 11n }));
    expect(error).toMatchObject({ kind: 'error-response', status: 412, error: 412 });
    expect(server.requests.map(({ headers }) => headers['if-match'])).toEqual(['"11"']);
  });

  it('retries a patch without a precondition after a lost answer, and with one only on the service’s 503', async () => {
    const lost = await startScriptedServer([
      { status: 200, dropConnection: true },
      json(200, '{"id":7,"name":"Fern"}', { ETag: '"3"' }),
    ]);
    expect((await createTestClient(lost.url).updatePlant(7n, { name: 'Fern' })).version).toBe(3n);
    expect(lost.requests).toHaveLength(2);

    const guarded = await startScriptedServer([{ status: 200, dropConnection: true }]);
    const error = await caught(createTestClient(guarded.url).updatePlant(7n, { name: 'Fern' }, { ifMatch: 2n }));
    expect(error.kind).toBe('network');
    expect(guarded.requests).toHaveLength(1);

    const unavailable = await startScriptedServer([
      errorAnswer(503, 503, 'database unavailable'),
      json(200, '{"id":7,"name":"Fern"}', { ETag: '"4"' }),
    ]);
    expect((await createTestClient(unavailable.url).updatePlant(7n, { name: 'Fern' }, { ifMatch: 2n })).version).toBe(
      4n,
    );
  });

  it('refuses a patch the contract refuses before sending, and an answer without a version', async () => {
    const server = await startScriptedServer([json(200, '{"id":7,"name":"Fern"}')]);
    const client = createTestClient(server.url);
    expect(await caught(client.updatePlant(7n, { name: '' }))).toMatchObject({ kind: 'invalid-input', error: 400 });
    expect(server.requests).toHaveLength(0);
    const error = await caught(client.updatePlant(7n, { name: 'Fern' }));
    expect(error).toMatchObject({ kind: 'invalid-response', status: 200 });
    expect(error.message).toContain('no version in its ETag');
  });

  it('reads a plant with its version, and deletes under If-Match', async () => {
    const server = await startScriptedServer([json(200, '{"id":7,"name":"Fern"}', { ETag: '"5"' }), { status: 204 }]);
    const client = createTestClient(server.url);
    const { plant, version } = await client.getVersionedPlant(7n);
    expect(plant).toStrictEqual({ id: 7n, name: 'Fern' });
    await client.deletePlant(7n, { ifMatch: version });
    expect(server.requests.map(({ method, headers }) => [method, headers['if-match']])).toEqual([
      ['GET', undefined],
      ['DELETE', '"5"'],
    ]);
  });
});
