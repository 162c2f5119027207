import { INT64_MAX, INT64_MIN } from '@plant-store/schema';
import { afterEach, describe, expect, it } from 'vitest';
import { closeScriptedServers, errorAnswer, json, startScriptedServer } from './test-support/scripted-server.js';
import { caught, createTestClient, TEST_TOKEN } from './test-support/test-client.js';

afterEach(closeScriptedServers);

describe('getPlant', () => {
  it.each([
    ['INT64_MAX', INT64_MAX, '9223372036854775807'],
    ['INT64_MIN', INT64_MIN, '-9223372036854775808'],
    ['2^53 + 1', 9007199254740993n, '9007199254740993'],
  ])('asks for the id %s exactly in the path and reads it back exactly', async (_label, id, idText) => {
    const server = await startScriptedServer([json(200, `{"id":${idText},"name":"Monstera"}`)]);
    expect(await createTestClient(server.url).getPlant(id)).toStrictEqual({ id, name: 'Monstera' });
    expect(server.requests.map(({ method, url }) => `${method} ${url}`)).toEqual([`GET /plants/${idText}`]);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${TEST_TOKEN}`);
    expect(server.requests[0]?.headers.accept).toBe('application/json');
  });

  it('throws the 404 Error once, without retrying', async () => {
    const server = await startScriptedServer([errorAnswer(404, 404, 'no plant with id 7')]);
    const error = await caught(createTestClient(server.url).getPlant(7n));
    expect(error).toMatchObject({ kind: 'error-response', status: 404, error: 404, message: 'no plant with id 7' });
    expect(server.requests).toHaveLength(1);
  });

  it('refuses an id outside int64 before sending', async () => {
    const server = await startScriptedServer([]);
    const error = await caught(createTestClient(server.url).getPlant(INT64_MIN - 1n));
    expect(error).toMatchObject({ kind: 'invalid-input', status: 0, error: 400 });
    expect(server.requests).toHaveLength(0);
  });

  it.each([
    ['an id written as a string', '{"id":"7","name":"Fern"}', 'id: id must be an integer between'],
    ['no name', '{"id":7}', 'name: name is required'],
    ['a null tag', '{"id":7,"name":"Fern","tag":null}', 'tag: tag must be a string'],
    ['null', 'null', 'Invalid type: Expected Object but received null'],
    ['an id beyond int64', '{"id":9223372036854775808,"name":"Fern"}', 'id: id must be an integer between'],
  ])('refuses a 200 body with %s as breaking the contract', async (_label, body, message) => {
    const server = await startScriptedServer([json(200, body)]);
    const error = await caught(createTestClient(server.url).getPlant(7n));
    expect(error).toMatchObject({ kind: 'invalid-response', status: 200, error: 0 });
    expect(error.message).toContain('GET /plants/7 answered 200 with a body that breaks the contract: ');
    expect(error.message).toContain(message);
    expect(server.requests).toHaveLength(1);
  });

  it('refuses a 200 body that is not JSON', async () => {
    const server = await startScriptedServer([{ status: 200, body: '<html>ok</html>' }]);
    const error = await caught(createTestClient(server.url).getPlant(7n));
    expect(error).toMatchObject({ kind: 'invalid-response', status: 200, error: 0 });
    expect(error.message).toBe('GET /plants/7 answered 200 with a body that is not JSON: <html>ok</html>');
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it('refuses the plant of another id', async () => {
    const server = await startScriptedServer([json(200, '{"id":8,"name":"Fern"}')]);
    expect((await caught(createTestClient(server.url).getPlant(7n))).message).toContain('id 8 is not 7');
  });
});
