import { INT64_MAX, INT64_MIN } from '@plant-store/schema';
import { afterEach, describe, expect, it } from 'vitest';
import {
  closeScriptedServers,
  errorAnswer,
  findClosedPort,
  json,
  startScriptedServer,
} from './test-support/scripted-server.js';
import { caught, createTestClient, TEST_TOKEN } from './test-support/test-client.js';

afterEach(closeScriptedServers);

describe('createPlant', () => {
  it.each([
    ['2^53 + 1', 9007199254740993n, '9007199254740993'],
    ['INT64_MAX', INT64_MAX, '9223372036854775807'],
    ['INT64_MIN', INT64_MIN, '-9223372036854775808'],
  ])('writes the id %s byte-exact and reads the answer back exactly', async (_label, id, idText) => {
    const server = await startScriptedServer([json(200, `{"id":${idText},"name":"Monstera","tag":"aroid"}`)]);
    const plant = await createTestClient(server.url).createPlant({ id, name: 'Monstera', tag: 'aroid' });

    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/plants');
    expect(request?.body).toBe(`{"id":${idText},"name":"Monstera","tag":"aroid"}`);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers.authorization).toBe(`Bearer ${TEST_TOKEN}`);
    expect(plant).toStrictEqual({ id, name: 'Monstera', tag: 'aroid' });
  });

  it('sends no tag key for an absent tag and returns the plant without one', async () => {
    const server = await startScriptedServer([json(200, '{"id":1,"name":"Fern"}')]);
    const plant = await createTestClient(server.url).createPlant({ id: 1n, name: 'Fern' });
    expect(server.requests[0]?.body).toBe('{"id":1,"name":"Fern"}');
    expect(plant).toStrictEqual({ id: 1n, name: 'Fern' });
    expect('tag' in plant).toBe(false);
  });

  it('accepts a safe-integer number id and sends it as the same integer', async () => {
    const server = await startScriptedServer([json(200, '{"id":42,"name":"Fern"}')]);
    expect(await createTestClient(server.url).createPlant({ id: 42, name: 'Fern' })).toStrictEqual({
      id: 42n,
      name: 'Fern',
    });
    expect(server.requests[0]?.body).toBe('{"id":42,"name":"Fern"}');
  });

  it.each([
    ['an empty name', { id: 1n, name: '' }, 'name must be a string of 1 to 255 characters'],
    ['an id beyond int64', { id: INT64_MAX + 1n, name: 'Fern' }, /^id must be an integer between/],
    ['an unsafe number id (already rounded)', { id: 2 ** 53 + 2, name: 'Fern' }, /^id must be an integer between/],
    ['a null tag', { id: 1n, name: 'Fern', tag: null }, 'tag must be a string of at most 255 characters'],
  ])('refuses %s with error 400 and sends nothing', async (_label, plant, message) => {
    const server = await startScriptedServer([]);
    // @ts-expect-error -- a null tag is not a NewPlantInput; the others are, and fail at run time only.
    const error = await caught(createTestClient(server.url).createPlant(plant));
    expect(error).toMatchObject({ kind: 'invalid-input', status: 0, error: 400 });
    expect(error.message).toMatch(message);
    expect(server.requests).toHaveLength(0);
  });

  it('maps a conflict (HTTP 400, error 409) and does not retry it', async () => {
    const server = await startScriptedServer([errorAnswer(400, 409, 'a plant with id 1 exists with other content')]);
    const error = await caught(createTestClient(server.url).createPlant({ id: 1n, name: 'Fern' }));
    expect(error).toMatchObject({
      kind: 'error-response',
      status: 400,
      error: 409,
      message: 'a plant with id 1 exists with other content',
    });
    expect(server.requests).toHaveLength(1);
  });

  it('refuses an answer for another id', async () => {
    const server = await startScriptedServer([json(200, '{"id":9007199254740992,"name":"Fern"}')]);
    const error = await caught(createTestClient(server.url).createPlant({ id: 9007199254740993n, name: 'Fern' }));
    expect(error).toMatchObject({ kind: 'invalid-response', status: 200, error: 0 });
    expect(error.message).toContain('id 9007199254740992 is not 9007199254740993');
  });

  it('retries after a refused connection and succeeds once the service listens', async () => {
    const port = await findClosedPort();
    const attempts: string[] = [];
    const client = createTestClient(`http://127.0.0.1:${port}`, {
      fetch: async (input, init) => {
        attempts.push(String(input));
        try {
          return await fetch(input, init);
        } finally {
          // The service comes up between the first attempt and the retry.
          if (attempts.length === 1) await startScriptedServer([json(200, '{"id":5,"name":"Fern"}')], port);
        }
      },
    });
    expect(await client.createPlant({ id: 5n, name: 'Fern' })).toStrictEqual({ id: 5n, name: 'Fern' });
    expect(attempts).toEqual([`http://127.0.0.1:${port}/plants`, `http://127.0.0.1:${port}/plants`]);
  });

  it('gives up after the configured attempts with a network error carrying the cause', async () => {
    const port = await findClosedPort();
    let calls = 0;
    const client = createTestClient(`http://127.0.0.1:${port}`, {
      fetch: (input, init) => {
        calls++;
        return fetch(input, init);
      },
    });
    const error = await caught(client.createPlant({ id: 5n, name: 'Fern' }));
    expect(calls).toBe(3);
    expect(error).toMatchObject({ kind: 'network', status: 0, error: 0 });
    expect(error.message).toMatch(/^POST \/plants failed: .*ECONNREFUSED/);
    expect(error.cause).toBeInstanceOf(TypeError);
    expect((error.cause as TypeError).cause).toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('retries a create whose answer was lost: the service answers the same create again with 200', async () => {
    const server = await startScriptedServer([
      { status: 200, dropConnection: true },
      json(200, '{"id":5,"name":"Fern"}'),
    ]);
    expect(await createTestClient(server.url).createPlant({ id: 5n, name: 'Fern' })).toStrictEqual({
      id: 5n,
      name: 'Fern',
    });
    expect(server.requests.map((request) => request.body)).toEqual([
      '{"id":5,"name":"Fern"}',
      '{"id":5,"name":"Fern"}',
    ]);
  });
});
