import { afterEach, describe, expect, it } from 'vitest';
import { closeScriptedServers, errorAnswer, json, startScriptedServer } from './test-support/scripted-server.js';
import { caught, createTestClient } from './test-support/test-client.js';

afterEach(closeScriptedServers);

const PLANT = json(200, '{"id":7,"name":"Fern"}');

describe('error answers', () => {
  it.each([
    [400, 400, 'id must be an integer between -9223372036854775808 and 9223372036854775807'],
    [401, 401, 'a bearer token is required'],
    [403, 403, 'this token lacks the plants:read scope'],
    [404, 404, 'no plant with id 7'],
    [405, 405, 'method not allowed'],
    [429, 429, 'too many requests'],
    [500, 500, 'internal error'],
    [503, 503, 'the database is unavailable'],
  ])('maps HTTP %d with an Error body to status, error and message', async (status, code, message) => {
    const server = await startScriptedServer([errorAnswer(status, code, message)]);
    const error = await caught(createTestClient(server.url, { retry: { attempts: 1 } }).getPlant(7n));
    expect(error).toMatchObject({ name: 'PlantStoreError', kind: 'error-response', status, error: code, message });
    expect(error).toBeInstanceOf(Error);
    expect(error.retryAfterSeconds).toBeUndefined();
  });

  it('keeps the Error body code apart from the HTTP status', async () => {
    const server = await startScriptedServer([errorAnswer(400, 415, 'Content-Type must be application/json')]);
    const error = await caught(createTestClient(server.url).createPlant({ id: 1n, name: 'Fern' }));
    expect(error).toMatchObject({ status: 400, error: 415 });
  });

  it('reads Retry-After into retryAfterSeconds', async () => {
    const server = await startScriptedServer([
      errorAnswer(503, 503, 'the database is unavailable', { 'Retry-After': '7' }),
    ]);
    const error = await caught(createTestClient(server.url, { retry: { attempts: 1 } }).getPlant(7n));
    expect(error).toMatchObject({ status: 503, error: 503, retryAfterSeconds: 7 });
  });

  it('maps a proxy HTML page to an invalid response whose error is the HTTP status', async () => {
    const html = '<html>\n  <body><h1>502 Bad Gateway</h1></body>\n</html>';
    const server = await startScriptedServer([{ status: 502, headers: { 'Content-Type': 'text/html' }, body: html }]);
    const error = await caught(createTestClient(server.url, { retry: { attempts: 1 } }).getPlant(7n));
    expect(error).toMatchObject({ kind: 'invalid-response', status: 502, error: 502 });
    expect(error.message).toBe(
      'GET /plants/7 answered 502 without an Error body: <html> <body><h1>502 Bad Gateway</h1></body> </html>',
    );
  });

  it.each([
    ['an empty body', ''],
    ['a JSON body that is not an Error', '{"error":"internal","message":"boom"}'],
    ['an Error code beyond int32', '{"error":2147483648,"message":"boom"}'],
    ['truncated JSON', '{"error":500,'],
  ])('maps a 500 with %s to an invalid response', async (_label, body) => {
    const server = await startScriptedServer([json(500, body)]);
    const error = await caught(createTestClient(server.url).getPlant(7n));
    expect(error).toMatchObject({ kind: 'invalid-response', status: 500, error: 500 });
    expect(error.message).toMatch(/^GET \/plants\/7 answered 500 without an Error body/);
    expect(server.requests).toHaveLength(1);
  });

  it('cuts a long body to 200 characters in the message', async () => {
    const server = await startScriptedServer([{ status: 500, body: 'x'.repeat(5000) }]);
    const error = await caught(createTestClient(server.url).getPlant(7n));
    expect(error.message).toBe(`GET /plants/7 answered 500 without an Error body: ${'x'.repeat(200)}...`);
  });

  it('does not follow a redirect, which would carry the token elsewhere', async () => {
    const target = await startScriptedServer([PLANT]);
    const server = await startScriptedServer([{ status: 302, headers: { Location: `${target.url}/plants/7` } }]);
    const error = await caught(createTestClient(server.url).getPlant(7n));
    expect(error).toMatchObject({ kind: 'invalid-response', status: 302, error: 0 });
    expect(error.message).toBe(`GET /plants/7 answered 302 where 200 was expected (Location: ${target.url}/plants/7)`);
    expect(target.requests).toHaveLength(0);
    expect(server.requests).toHaveLength(1);
  });
});

describe('retries of idempotent calls', () => {
  it('retries a 503 after Retry-After (capped by maxDelayMs), then returns the answer', async () => {
    const server = await startScriptedServer([
      errorAnswer(503, 503, 'the database is unavailable', { 'Retry-After': '1' }),
      PLANT,
    ]);
    // baseDelayMs 0: the backoff alone would not wait at all, so the wait is Retry-After's (1 s capped to 60 ms).
    const client = createTestClient(server.url, { retry: { attempts: 3, baseDelayMs: 0, maxDelayMs: 60 } });
    expect(await client.getPlant(7n)).toStrictEqual({ id: 7n, name: 'Fern' });
    expect(server.requests).toHaveLength(2);
    const [first, second] = server.requests;
    const waited = (second?.receivedAt ?? 0) - (first?.receivedAt ?? 0);
    expect(waited).toBeGreaterThanOrEqual(55);
    expect(waited).toBeLessThan(900);
  });

  it.each([
    ['429', errorAnswer(429, 429, 'too many requests')],
    ['a 502 from a proxy', { status: 502, body: 'Bad Gateway' }],
    ['a 503 without an Error body', { status: 503 }],
    ['a 504 from a proxy', { status: 504, body: 'Gateway Timeout' }],
    ['a lost answer', { status: 200, dropConnection: true }],
  ])('retries %s', async (_label, answer) => {
    const server = await startScriptedServer([answer, PLANT]);
    expect(await createTestClient(server.url).getPlant(7n)).toStrictEqual({ id: 7n, name: 'Fern' });
    expect(server.requests.map((request) => request.url)).toEqual(['/plants/7', '/plants/7']);
  });

  it("throws a retry's 404: only a delete counts it as done", async () => {
    const server = await startScriptedServer([
      errorAnswer(503, 503, 'the database is unavailable', { 'Retry-After': '0' }),
      errorAnswer(404, 404, 'no plant with id 7'),
    ]);
    const error = await caught(createTestClient(server.url).getPlant(7n));
    expect(error).toMatchObject({ kind: 'error-response', status: 404, error: 404 });
    expect(server.requests).toHaveLength(2);
  });

  it('gives up after the configured attempts and throws the last answer', async () => {
    const unavailable = errorAnswer(503, 503, 'the database is unavailable', { 'Retry-After': '0' });
    const server = await startScriptedServer([unavailable, unavailable, unavailable, PLANT]);
    const error = await caught(createTestClient(server.url).getPlant(7n));
    expect(error).toMatchObject({ kind: 'error-response', status: 503, error: 503, retryAfterSeconds: 0 });
    expect(server.requests).toHaveLength(3);
  });

  it('sends once with attempts: 1', async () => {
    const server = await startScriptedServer([{ status: 503 }, PLANT]);
    await caught(createTestClient(server.url, { retry: { attempts: 1 } }).getPlant(7n));
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    [400, 400],
    [401, 401],
    [403, 403],
    [404, 404],
    [500, 500],
  ])('never retries %d', async (status, code) => {
    const server = await startScriptedServer([errorAnswer(status, code, 'no'), PLANT]);
    const error = await caught(createTestClient(server.url).listPlants());
    expect(error).toMatchObject({ status, error: code });
    expect(server.requests).toHaveLength(1);
  });
});

describe('timeouts and aborts', () => {
  it('times out an attempt after timeoutMs', async () => {
    const server = await startScriptedServer([{ ...PLANT, delayMs: 3000 }]);
    const started = performance.now();
    const error = await caught(createTestClient(server.url, { timeoutMs: 50, retry: { attempts: 1 } }).getPlant(7n));
    expect(performance.now() - started).toBeLessThan(2000);
    expect(error).toMatchObject({
      kind: 'timeout',
      status: 0,
      error: 0,
      message: 'GET /plants/7 timed out: no answer within 50 ms',
    });
    expect(error.cause).toMatchObject({ name: 'TimeoutError' });
  });

  it('retries a timed-out read and returns the next answer', async () => {
    const server = await startScriptedServer([{ ...PLANT, delayMs: 3000 }, PLANT]);
    expect(await createTestClient(server.url, { timeoutMs: 100 }).getPlant(7n)).toStrictEqual({ id: 7n, name: 'Fern' });
    expect(server.requests).toHaveLength(2);
  });

  it('times out an answer whose body stalls after the headers', async () => {
    const server = await startScriptedServer([
      { status: 200, headers: { 'Content-Type': 'application/json' }, body: '{"id":7,', stallBody: true },
    ]);
    const error = await caught(createTestClient(server.url, { timeoutMs: 100, retry: { attempts: 1 } }).getPlant(7n));
    expect(error).toMatchObject({ kind: 'timeout', status: 0 });
  });

  it("stops at once, not retrying, when the caller's signal aborts during a request", async () => {
    const server = await startScriptedServer([{ ...PLANT, delayMs: 3000 }, PLANT]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('user left')), 50);
    const error = await caught(createTestClient(server.url).getPlant(7n, { signal: controller.signal }));
    expect(error).toMatchObject({ kind: 'aborted', status: 0, message: 'GET /plants/7 was aborted' });
    expect(error.cause).toEqual(new Error('user left'));
    expect(server.requests).toHaveLength(1);
  });

  it("stops while waiting to retry when the caller's signal aborts", async () => {
    const server = await startScriptedServer([errorAnswer(503, 503, 'unavailable', { 'Retry-After': '60' }), PLANT]);
    const controller = new AbortController();
    const client = createTestClient(server.url, { retry: { attempts: 3, baseDelayMs: 0, maxDelayMs: 60_000 } });
    const started = performance.now();
    setTimeout(() => controller.abort(), 100);
    const error = await caught(client.getPlant(7n, { signal: controller.signal }));
    expect(error).toMatchObject({ kind: 'aborted' });
    expect(performance.now() - started).toBeLessThan(5000);
    expect(server.requests).toHaveLength(1);
  });

  it('sends nothing when the signal has already aborted', async () => {
    const server = await startScriptedServer([PLANT]);
    const error = await caught(createTestClient(server.url).getPlant(7n, { signal: AbortSignal.abort() }));
    expect(error).toMatchObject({ kind: 'aborted' });
    expect(server.requests).toHaveLength(0);
  });
});
