import { connect } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { createTestStorage, TEST_ACTOR, type TestStorage, testEngines, testToken } from '@plant-store/db/testing';
import { ErrorSchema, INT64_MAX, INT64_MIN } from '@plant-store/schema';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failOnContractViolations } from '../test-support/checked-fetch.js';
import { request, startTestService, type TestService } from '../test-support/test-service.js';

failOnContractViolations();

describe.each(testEngines())('POST /plants on %s', (engine) => {
  let storage: TestStorage;
  let service: TestService;
  let writer: string;
  let reader: string;
  let revoked: string;

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    service = await startTestService(storage);
    writer = (await service.db.issueToken(testToken({ name: 'writer', scopes: ['plants:write'] }))).token;
    reader = (await service.db.issueToken(testToken({ name: 'reader', scopes: ['plants:read'] }))).token;
    revoked = (await service.db.issueToken(testToken({ name: 'revoked', scopes: ['plants:write'] }))).token;
    await service.db.revokeToken('revoked', { actor: TEST_ACTOR });
  });

  afterAll(async () => {
    await service?.close();
    await storage?.dispose();
  });

  const post = (body: string, options: { token?: string; contentType?: string | null } = {}) =>
    request(service.url, '/plants', {
      body,
      token: options.token ?? writer,
      ...(options.contentType === undefined ? {} : { contentType: options.contentType }),
    });

  /** Asserts the contract's Error shape and returns its `error` code and message. */
  function expectError(response: { status: number; headers: Headers; body: unknown }, status: number, code: number) {
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Object.keys(response.body ?? {}).sort()).toEqual(['error', 'message']);
    const body = v.parse(ErrorSchema, response.body);
    expect(body.error).toBe(code);
    return body.message;
  }

  describe('success and exact int64', () => {
    it('answers 200 with the stored plant and stores it', async () => {
      const response = await post('{"id": 1, "name": "Monstera", "tag": "aroid"}');
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.text).toBe('{"id":1,"name":"Monstera","tag":"aroid"}');
      expect((await service.db.findPlant(1n))?.plant).toEqual({ id: 1n, name: 'Monstera', tag: 'aroid' });
    });

    it('omits tag when absent and ignores unknown fields without storing them', async () => {
      const response = await post('{"id": 2, "name": "Fern", "colour": "green", "tag_": 1}');
      expect(response.status).toBe(200);
      expect(response.text).toBe('{"id":2,"name":"Fern"}');
      expect((await service.db.findPlant(2n))?.plant).toEqual({ id: 2n, name: 'Fern' });
    });

    it.each([
      ['2^53 + 1', '9007199254740993'],
      ['int64 max', INT64_MAX.toString()],
      ['int64 min', INT64_MIN.toString()],
      ['-(2^53 + 1)', '-9007199254740993'],
    ])('keeps %s exact from request to database to response', async (_label, digits) => {
      const response = await post(`{"id": ${digits}, "name": "Exact"}`);
      expect(response.status).toBe(200);
      expect(response.text).toBe(`{"id":${digits},"name":"Exact"}`);
      expect((await service.db.findPlant(BigInt(digits)))?.plant).toEqual({ id: BigInt(digits), name: 'Exact' });
    });

    it('accepts an integer written with an exponent or a zero fraction', async () => {
      const response = await post('{"id": 3.0e2, "name": "Three hundred"}');
      expect(response.status).toBe(200);
      expect(response.text).toBe('{"id":300,"name":"Three hundred"}');
    });

    it('accepts Content-Type with a charset parameter', async () => {
      const response = await post('{"id": 4, "name": "Charset"}', { contentType: 'application/json; charset=UTF-8' });
      expect(response.status).toBe(200);
    });
  });

  describe('replays and conflicts', () => {
    it('answers a replay of the same plant with 200 and changes nothing', async () => {
      const body = '{"id": 100, "name": "Pothos", "tag": "vine"}';
      const first = await post(body);
      const second = await post(body);
      expect(first.status).toBe(200);
      expect(second.status).toBe(200);
      expect(second.text).toBe(first.text);
      expect((await service.db.findPlant(100n))?.plant).toEqual({ id: 100n, name: 'Pothos', tag: 'vine' });
    });

    it('answers the same id with other content with 400 and error 409, keeping the stored plant', async () => {
      await post('{"id": 101, "name": "Cactus"}');
      for (const other of [
        '{"id": 101, "name": "Not a cactus"}',
        '{"id": 101, "name": "Cactus", "tag": "desert"}',
        '{"id": 101, "name": "Cactus", "tag": ""}',
      ]) {
        const message = expectError(await post(other), 400, 409);
        expect(message).toContain('101');
      }
      expect((await service.db.findPlant(101n))?.plant).toEqual({ id: 101n, name: 'Cactus' });
    });

    it('lets exactly one of 40 concurrent creates of one id with differing content win', async () => {
      const id = 9007199254740995n;
      const responses = await Promise.all(
        Array.from({ length: 40 }, (_, index) => post(`{"id": ${id}, "name": "Racer ${index}"}`)),
      );
      const winners = responses.filter((response) => response.status === 200);
      expect(winners).toHaveLength(1);
      for (const response of responses.filter((candidate) => candidate.status !== 200)) {
        expectError(response, 400, 409);
      }
      expect((await service.db.findPlant(id))?.plant).toEqual(winners[0]?.body);
    });

    it('answers 40 concurrent identical creates with 200 each and stores one plant', async () => {
      const body = '{"id": 102, "name": "Twin", "tag": "same"}';
      const responses = await Promise.all(Array.from({ length: 40 }, () => post(body)));
      expect(responses.map((response) => response.status)).toEqual(Array(40).fill(200));
      expect((await service.db.findPlant(102n))?.plant).toEqual({ id: 102n, name: 'Twin', tag: 'same' });
    });
  });

  describe('bad input answers 400 in the Error shape and stores nothing', () => {
    it.each([
      ['malformed JSON', '{"id": 1, "name": ', 400, 'not valid JSON'],
      ['an array', '[{"id": 1, "name": "x"}]', 400, 'JSON object'],
      ['a string', '"plant"', 400, 'JSON object'],
      ['null', 'null', 400, 'JSON object'],
      ['an empty body', '', 400, 'request body is missing'],
      ['only whitespace', ' \n ', 400, 'not valid JSON'],
      ['duplicate keys', '{"id": 200, "name": "a", "name": "b"}', 400, 'Duplicate key'],
      ['a missing id', '{"name": "x"}', 400, 'id is required'],
      ['a string id', '{"id": "200", "name": "x"}', 400, 'id must be an integer'],
      ['a fractional id', '{"id": 200.5, "name": "x"}', 400, 'id must be an integer'],
      ['a null id', '{"id": null, "name": "x"}', 400, 'id must be an integer'],
      ['id above int64', '{"id": 9223372036854775808, "name": "x"}', 400, 'id must be an integer between'],
      ['id below int64', '{"id": -9223372036854775809, "name": "x"}', 400, 'id must be an integer between'],
      ['a huge exponent id', '{"id": 1e999999, "name": "x"}', 400, 'id must be an integer'],
      ['a missing name', '{"id": 200}', 400, 'name is required'],
      ['an empty name', '{"id": 200, "name": ""}', 400, 'name must be a string of 1 to 255'],
      ['a 256-character name', `{"id": 200, "name": "${'n'.repeat(256)}"}`, 400, 'name must be a string of 1 to 255'],
      ['a numeric name', '{"id": 200, "name": 5}', 400, 'name must be a string'],
      ['a NUL in the name', '{"id": 200, "name": "a\\u0000b"}', 400, 'NUL'],
      ['a lone surrogate in the name', '{"id": 200, "name": "a\\ud800"}', 400, 'valid Unicode'],
      ['a null tag', '{"id": 200, "name": "x", "tag": null}', 400, 'tag must be a string'],
      ['a 256-character tag', `{"id": 200, "name": "x", "tag": "${'t'.repeat(256)}"}`, 400, 'at most 255'],
    ])('%s', async (_label, body, code, messagePart) => {
      const message = expectError(await post(body), 400, code);
      expect(message).toContain(messagePart);
      expect(await service.db.findPlant(200n)).toBeNull();
    });

    it('gives the exact message of the contract for an out-of-range id', async () => {
      const message = expectError(await post('{"id": 9223372036854775808, "name": "x"}'), 400, 400);
      expect(message).toBe('id must be an integer between -9223372036854775808 and 9223372036854775807');
    });

    it('accepts a 255-character name and tag counted in characters, not UTF-16 units', async () => {
      const name = '🌵'.repeat(255);
      const response = await post(`{"id": 201, "name": "${name}", "tag": "${'é'.repeat(255)}"}`);
      expect(response.status).toBe(200);
      expect((await service.db.findPlant(201n))?.plant).toEqual({ id: 201n, name, tag: 'é'.repeat(255) });
    });

    it.each([
      ['one level more than the limit', 65],
      ['far deeper than the call stack holds', 30_000],
    ])('refuses a body nested %s with a message naming the limit', async (_label, levels) => {
      const body = `{"id": 200, "name": "x", "extra": ${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;
      expect(expectError(await post(body), 400, 400)).toBe(
        'request body is nested too deep: at most 64 levels of arrays and objects',
      );
      expect(await service.db.findPlant(200n)).toBeNull();
    });

    it('reads a body nested exactly as deep as the limit', async () => {
      const response = await post(`{"id": 203, "name": "Deep", "extra": ${'['.repeat(63)}${']'.repeat(63)}}`);
      expect(response.status).toBe(200);
    });

    it('refuses a duplicate key with another value and reads one that repeats the same value', async () => {
      expect(expectError(await post('{"id": 204, "name": "a", "name": "b"}'), 400, 400)).toContain(
        "Duplicate key 'name'",
      );
      expect(await service.db.findPlant(204n)).toBeNull();
      const repeated = await post('{"id": 204, "name": "Echo", "name": "Echo"}');
      expect(repeated.text).toBe('{"id":204,"name":"Echo"}');
    });

    it.each([
      ['gzip', gzipSync],
      ['GZip', gzipSync],
      ['deflate', deflateSync],
      ['br', brotliCompressSync],
    ])('reads a body sent with Content-Encoding %s', async (encoding, compress) => {
      const id = 210 + ['gzip', 'GZip', 'deflate', 'br'].indexOf(encoding);
      const response = await request(service.url, '/plants', {
        body: compress(Buffer.from(`{"id": ${id}, "name": "Squeezed"}`)),
        token: writer,
        headers: { 'content-encoding': encoding },
      });
      expect(response.text).toBe(`{"id":${id},"name":"Squeezed"}`);
    });

    it.each(['zstd', 'compress', 'gzip, br', 'identity, gzip'])(
      'refuses Content-Encoding %s with error 415 naming the ones it reads',
      async (encoding) => {
        const response = await request(service.url, '/plants', {
          body: '{"id": 200, "name": "x"}',
          token: writer,
          headers: { 'content-encoding': encoding },
        });
        expect(expectError(response, 400, 415)).toBe(
          'request body Content-Encoding is not supported; send identity, gzip, deflate or br (one of them, not a list)',
        );
      },
    );

    it('refuses bytes that are not UTF-8', async () => {
      const bytes = new Uint8Array([...Buffer.from('{"id": 200, "name": "'), 0xff, 0xfe, ...Buffer.from('"}')]);
      const response = await request(service.url, '/plants', { body: bytes, token: writer });
      expect(expectError(response, 400, 400)).toContain('UTF-8');
    });

    it.each([
      ['text/plain', 'text/plain'],
      ['form data', 'application/x-www-form-urlencoded'],
      ['a JSON suffix type', 'application/vnd.api+json'],
    ])('refuses Content-Type %s with error 415', async (_label, contentType) => {
      const message = expectError(await post('{"id": 200, "name": "x"}', { contentType }), 400, 415);
      expect(message).toContain('application/json');
    });

    it('refuses a missing Content-Type with error 415', async () => {
      expectError(await post('{"id": 200, "name": "x"}', { contentType: null }), 400, 415);
    });

    it('refuses a charset other than UTF-8 with error 415', async () => {
      const response = await post('{"id": 200, "name": "x"}', { contentType: 'application/json; charset=latin1' });
      expect(expectError(response, 400, 415)).toContain('UTF-8');
    });

    it('refuses a body over the 64 KiB limit with error 413', async () => {
      const body = `{"id": 200, "name": "x", "padding": "${'p'.repeat(64 * 1024)}"}`;
      expect(expectError(await post(body), 400, 413)).toContain('65536');
    });

    it('accepts a body just under the limit', async () => {
      const head = '{"id": 202, "name": "Padded", "padding": "';
      const body = `${head}${'p'.repeat(64 * 1024 - head.length - 2)}"}`;
      expect(Buffer.byteLength(body)).toBe(64 * 1024);
      expect((await post(body)).status).toBe(200);
    });
  });

  describe('bearer authentication', () => {
    const validBody = '{"id": 310, "name": "Guarded"}';

    it('answers a request without Authorization with 401 and a Bearer challenge', async () => {
      const response = await request(service.url, '/plants', { body: validBody });
      expectError(response, 401, 401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="plant-store"');
    });

    it.each([
      ['a token without the Bearer word', () => writer],
      ['a bare word', 'abc123'],
      ['a Basic credential', 'Basic dXNlcjpwYXNz'],
      ['a scheme that only starts with Bearer', () => `Bearerx ${writer}`],
    ])(
      'answers %s with 401, a message saying the Bearer scheme is missing, and the bare challenge',
      async (_label, header) => {
        const authorization = typeof header === 'function' ? header() : header;
        const response = await request(service.url, '/plants', { body: validBody, headers: { authorization } });
        expect(expectError(response, 401, 401)).toBe(
          'the Authorization header lacks the Bearer scheme: send Authorization: Bearer <token>',
        );
        // RFC 6750 3.1: no error code when the request carries no bearer credential at all.
        expect(response.headers.get('www-authenticate')).toBe('Bearer realm="plant-store"');
        expect(response.text).not.toContain(writer);
      },
    );

    it.each([
      ['an unknown token', 'Bearer pst_unknown'],
      ['a revoked token', () => `Bearer ${revoked}`],
      ['an empty bearer', 'Bearer '],
      ['the Bearer word alone', 'Bearer'],
      ['a token with spaces', 'Bearer a b c'],
    ])('answers %s with 401 invalid_token', async (_label, header) => {
      const authorization = typeof header === 'function' ? header() : header;
      const response = await request(service.url, '/plants', { body: validBody, headers: { authorization } });
      expectError(response, 401, 401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="plant-store", error="invalid_token"');
    });

    it('answers a token without plants:write with 403 insufficient_scope', async () => {
      const response = await post(validBody, { token: reader });
      expectError(response, 403, 403);
      expect(response.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    });

    it('accepts the scheme word in any case', async () => {
      const response = await request(service.url, '/plants', {
        body: validBody,
        headers: { authorization: `bEaReR ${writer}` },
      });
      expect(response.text).toBe('{"id":310,"name":"Guarded"}');
    });

    it('authenticates before reading or validating the body', async () => {
      for (const [body, contentType] of [
        ['{not json', 'application/json'],
        ['{"id": 301, "name": "x"}', 'text/plain'],
        [`{"padding": "${'p'.repeat(100 * 1024)}"}`, 'application/json'],
      ] as const) {
        const response = await request(service.url, '/plants', { body, contentType });
        expectError(response, 401, 401);
        const forbidden = await request(service.url, '/plants', { body, contentType, token: reader });
        expectError(forbidden, 403, 403);
      }
      expect(await service.db.findPlant(301n)).toBeNull();
    });

    it('never echoes a token in a response or a log line', async () => {
      const attempts = [
        await post('{"id": 320, "name": 5}'),
        await post(validBody, { token: reader }),
        await post(validBody, { token: revoked }),
        await request(service.url, '/plants', { body: validBody, headers: { authorization: `Bearer ${writer} x` } }),
      ];
      expect(attempts.map((response) => response.status)).toEqual([400, 403, 401, 401]);
      for (const token of [writer, reader, revoked]) {
        for (const response of attempts) expect(response.text).not.toContain(token);
        expect(service.logs.join('\n')).not.toContain(token);
      }
    });
  });

  describe('other routes', () => {
    it('answers an unknown path with 404 in the Error shape', async () => {
      expectError(await request(service.url, '/nope'), 404, 404);
    });

    it('answers another method on /plants with 405, Allow and the Error shape', async () => {
      const response = await request(service.url, '/plants', { method: 'PUT', token: writer });
      expectError(response, 405, 405);
      expect(response.headers.get('allow')).toContain('POST');
    });

    it('answers a request the HTTP parser rejects with 400 in the Error shape', async () => {
      const { hostname, port } = new URL(service.url);
      const socket = connect(Number(port), hostname);
      socket.end('NOT A REQUEST\r\n\r\n');
      let raw = '';
      for await (const chunk of socket) raw += String(chunk);
      const [head = '', body] = raw.split('\r\n\r\n');
      expect(head).toMatch(/^HTTP\/1\.1 400 /);
      expect(head.toLowerCase()).toContain('content-type: application/json');
      expect(body).toBe('{"error":400,"message":"malformed HTTP request"}');
    });

    it('answers /healthz and /readyz without authentication', async () => {
      expect((await request(service.url, '/healthz')).body).toEqual({ status: 'ok' });
      const ready = await request(service.url, '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ status: 'ready' });
    });
  });
});
