import { INT64_MIN } from '@plant-store/schema';
import { afterEach, describe, expect, it } from 'vitest';
import { closeScriptedServers, errorAnswer, startScriptedServer } from './test-support/scripted-server.js';
import { caught, createTestClient, TEST_TOKEN } from './test-support/test-client.js';

afterEach(closeScriptedServers);

describe('deletePlant', () => {
  it('sends DELETE /plants/{id} with the id exact and resolves on 204', async () => {
    const server = await startScriptedServer([{ status: 204 }]);
    await expect(createTestClient(server.url).deletePlant(INT64_MIN)).resolves.toBeUndefined();
    expect(server.requests.map(({ method, url }) => `${method} ${url}`)).toEqual([
      'DELETE /plants/-9223372036854775808',
    ]);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${TEST_TOKEN}`);
  });

  it('throws the 404 Error without retrying', async () => {
    const server = await startScriptedServer([errorAnswer(404, 404, 'no plant with id 3')]);
    const error = await caught(createTestClient(server.url).deletePlant(3n));
    expect(error).toMatchObject({ kind: 'error-response', status: 404, error: 404, message: 'no plant with id 3' });
    expect(server.requests).toHaveLength(1);
  });

  it('does not retry when the answer was lost: the delete may have happened', async () => {
    const server = await startScriptedServer([{ status: 204, dropConnection: true }, { status: 204 }]);
    const error = await caught(createTestClient(server.url).deletePlant(3n));
    expect(error).toMatchObject({ kind: 'network', status: 0 });
    expect(server.requests).toHaveLength(1);
  });

  it('does not retry after a timeout', async () => {
    const server = await startScriptedServer([{ status: 204, delayMs: 2000 }, { status: 204 }]);
    const error = await caught(createTestClient(server.url, { timeoutMs: 50 }).deletePlant(3n));
    expect(error).toMatchObject({ kind: 'timeout', status: 0 });
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    [502, 'Bad Gateway'],
    [504, 'Gateway Timeout'],
  ])('does not retry a gateway %d: the service may have deleted', async (status, text) => {
    const server = await startScriptedServer([{ status, body: text }, { status: 204 }]);
    const error = await caught(createTestClient(server.url).deletePlant(3n));
    expect(error).toMatchObject({ kind: 'invalid-response', status, error: status });
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    [503, errorAnswer(503, 503, 'the database is unavailable', { 'Retry-After': '0' })],
    [429, errorAnswer(429, 429, 'too many requests', { 'Retry-After': '0' })],
  ])('retries a %d: the service says it did not delete', async (_status, answer) => {
    const server = await startScriptedServer([answer, { status: 204 }]);
    await expect(createTestClient(server.url).deletePlant(3n)).resolves.toBeUndefined();
    expect(server.requests.map(({ method, url }) => `${method} ${url}`)).toEqual([
      'DELETE /plants/3',
      'DELETE /plants/3',
    ]);
  });

  it.each([
    ['an HTML 503 from a gateway', { status: 503, headers: { 'Content-Type': 'text/html' }, body: '<h1>503</h1>' }],
    ['a 503 without a body', { status: 503, headers: { 'Retry-After': '0' } }],
    ['an HTML 429 from a gateway', { status: 429, headers: { 'Content-Type': 'text/html' }, body: '<h1>429</h1>' }],
  ])('does not retry %s: the gateway may have forwarded the delete', async (_label, answer) => {
    const server = await startScriptedServer([answer, { status: 204 }]);
    const error = await caught(createTestClient(server.url).deletePlant(3n));
    expect(error).toMatchObject({ kind: 'invalid-response', status: answer.status, error: answer.status });
    expect(server.requests).toHaveLength(1);
  });

  it('does not retry an Error body whose code is not 503 or 429', async () => {
    const server = await startScriptedServer([errorAnswer(503, 500, 'internal error'), { status: 204 }]);
    const error = await caught(createTestClient(server.url).deletePlant(3n));
    expect(error).toMatchObject({ kind: 'error-response', status: 503, error: 500 });
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    [503, errorAnswer(503, 503, 'the database is unavailable', { 'Retry-After': '0' })],
    [429, errorAnswer(429, 429, 'too many requests', { 'Retry-After': '0' })],
  ])('resolves when the retry after a %d answers 404: the first attempt deleted it', async (_status, answer) => {
    const server = await startScriptedServer([answer, errorAnswer(404, 404, 'no plant with id 3')]);
    await expect(createTestClient(server.url).deletePlant(3n)).resolves.toBeUndefined();
    expect(server.requests).toHaveLength(2);
  });

  it('resolves on a 404 at the third attempt', async () => {
    const unavailable = errorAnswer(503, 503, 'the database is unavailable', { 'Retry-After': '0' });
    const server = await startScriptedServer([unavailable, unavailable, errorAnswer(404, 404, 'no plant with id 3')]);
    await expect(createTestClient(server.url).deletePlant(3n)).resolves.toBeUndefined();
    expect(server.requests).toHaveLength(3);
  });

  it("throws a retry's 404 that is not the service's Error body", async () => {
    const server = await startScriptedServer([
      errorAnswer(503, 503, 'the database is unavailable', { 'Retry-After': '0' }),
      { status: 404, headers: { 'Content-Type': 'text/html' }, body: '<h1>Not Found</h1>' },
    ]);
    const error = await caught(createTestClient(server.url).deletePlant(3n));
    expect(error).toMatchObject({ kind: 'invalid-response', status: 404, error: 404 });
    expect(server.requests).toHaveLength(2);
  });

  it('throws the last 503 when every attempt is refused', async () => {
    const unavailable = errorAnswer(503, 503, 'the database is unavailable', { 'Retry-After': '0' });
    const server = await startScriptedServer([unavailable, unavailable, unavailable, { status: 204 }]);
    const error = await caught(createTestClient(server.url).deletePlant(3n));
    expect(error).toMatchObject({ kind: 'error-response', status: 503, error: 503 });
    expect(server.requests).toHaveLength(3);
  });

  it('refuses a 200 where 204 is the contract', async () => {
    const server = await startScriptedServer([{ status: 200, body: '{}' }]);
    const error = await caught(createTestClient(server.url).deletePlant(3n));
    expect(error).toMatchObject({ kind: 'invalid-response', status: 200, error: 0 });
    expect(error.message).toBe('DELETE /plants/3 answered 200 where 204 was expected: {}');
  });
});
