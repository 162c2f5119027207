import { afterEach, describe, expect, it } from 'vitest';
import { createPlantStoreClient } from './create-plant-store-client.js';
import { isPlantStoreError, PlantStoreError } from './plant-store-error.js';
import { closeScriptedServers, json, startScriptedServer } from './test-support/scripted-server.js';
import { caught, TEST_TOKEN } from './test-support/test-client.js';

afterEach(closeScriptedServers);

describe('createPlantStoreClient', () => {
  it('uses the global fetch by default and accepts a URL object as baseUrl', async () => {
    const server = await startScriptedServer([json(200, '{"id":1,"name":"Fern"}')]);
    const client = createPlantStoreClient({ baseUrl: new URL(server.url), token: TEST_TOKEN });
    expect(await client.getPlant(1n)).toStrictEqual({ id: 1n, name: 'Fern' });
    expect(server.requests).toHaveLength(1);
  });

  it('sends every request through the given fetch', async () => {
    const server = await startScriptedServer([json(200, '{"id":1,"name":"Fern"}'), { status: 204 }]);
    const seen: string[] = [];
    const client = createPlantStoreClient({
      baseUrl: server.url,
      token: TEST_TOKEN,
      fetch: (input, init) => {
        seen.push(`${init?.method} ${String(input)}`);
        return fetch(input, init);
      },
    });
    await client.getPlant(1n);
    await client.deletePlant(1n);
    expect(seen).toEqual([`GET ${server.url}/plants/1`, `DELETE ${server.url}/plants/1`]);
  });

  it.each([
    ['a relative baseUrl', { baseUrl: '/plants' }, TypeError, /absolute http or https URL/],
    ['another scheme', { baseUrl: 'ftp://example.com/' }, TypeError, /http or https URL, not ftp:/],
    ['credentials in baseUrl', { baseUrl: 'https://user:secret@example.com/' }, TypeError, /credentials/],
    ['a query in baseUrl', { baseUrl: 'https://example.com/?x=1' }, TypeError, /query or fragment/],
    ['an empty token', { token: '' }, TypeError, /bearer token/],
    ['a token with a line break', { token: 'pst_a\r\nX-Evil: 1' }, TypeError, /bearer token/],
    ['a zero timeout', { timeoutMs: 0 }, RangeError, /timeoutMs/],
    ['zero attempts', { retry: { attempts: 0 } }, RangeError, /retry.attempts/],
  ])('refuses %s at once', (_label, options, type, message) => {
    const create = () => createPlantStoreClient({ baseUrl: 'http://127.0.0.1:3000', token: TEST_TOKEN, ...options });
    expect(create).toThrow(type);
    expect(create).toThrow(message);
  });

  it('never puts the token in an error message', () => {
    const token = 'pst_secret value';
    expect(() => createPlantStoreClient({ baseUrl: 'http://127.0.0.1:3000', token })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('secret') }),
    );
  });
});

describe('isPlantStoreError', () => {
  it('tells a PlantStoreError from other errors', async () => {
    const server = await startScriptedServer([{ status: 500 }]);
    const error = await caught(createPlantStoreClient({ baseUrl: server.url, token: TEST_TOKEN }).getPlant(1n));
    expect(isPlantStoreError(error)).toBe(true);
    expect(error).toBeInstanceOf(PlantStoreError);
    expect(isPlantStoreError(new Error('x'))).toBe(false);
    expect(isPlantStoreError({ name: 'PlantStoreError', status: 500, error: 500 })).toBe(false);
  });
});
