import { connect } from 'node:net';
import { openDatabase } from '@plant-store/db';
import { createTestStorage, type TestStorage, testEngines, testToken } from '@plant-store/db/testing';
import { SCOPES } from '@plant-store/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failOnContractViolations } from './test-support/checked-fetch.js';
import {
  CODINGS,
  type Coding,
  compressors,
  GARBAGE,
  issue28Reproducer,
  jsonOfSize,
  truncated,
  wrongChecksum,
} from './test-support/compressed-bodies.js';
import { type ServiceProcess, startServiceProcess, storageEnv } from './test-support/service-process.js';
import { request } from './test-support/test-service.js';

failOnContractViolations();

/** The service's default BODY_LIMIT_BYTES. */
const LIMIT = 65_536;

/** The body routes: the HTTP status each answers for a client fault (POST /plants: always 400). */
const BODY_ROUTES = [
  { path: '/plants', faultStatus: (_code: number) => 400 },
  { path: '/webhooks', faultStatus: (code: number) => code },
  { path: '/tokens', faultStatus: (code: number) => code },
] as const;

/** A resend takes no body ("the body, if any, is ignored"): it answers as it would without one. */
const RESEND_PATH = '/webhooks/1/deliveries/1/resend';

interface BodyCase {
  readonly kind: string;
  readonly body: Buffer;
  /** The `error` codes the contract allows for it (two where it is both corrupt and over the limit). */
  readonly codes: readonly number[];
}

/**
 * Every kind of body that does not decode, or decodes past the limit, in `coding`: corrupt,
 * truncated and (gzip, deflate) with a wrong checksum, at sizes around the limit, and over it.
 * A body of exactly the limit decodes and reaches validation (400: it is no plant, webhook or token).
 */
function bodyCases(coding: Coding): BodyCase[] {
  const compress = compressors[coding];
  const cases: BodyCase[] = [
    { kind: 'corrupt', body: GARBAGE, codes: [400] },
    { kind: 'valid, the limit exactly', body: compress(jsonOfSize(LIMIT)), codes: [400] },
    { kind: 'valid, one byte over the limit', body: compress(jsonOfSize(LIMIT + 1)), codes: [413] },
    { kind: 'valid, 16 times the limit', body: compress(jsonOfSize(16 * LIMIT)), codes: [413] },
  ];
  // A body both corrupt at its end and over the limit: either answer, by what the decoder finds first.
  const around: Array<[number, readonly number[]]> = [
    [LIMIT - 1, [400]],
    [LIMIT, [400]],
    [LIMIT + 1, [400, 413]],
    [LIMIT + 32 * 1024, [413]],
  ];
  for (const [size, codes] of around) {
    cases.push({ kind: `truncated, ${size} bytes decoded`, body: truncated(compress(jsonOfSize(size))), codes });
    if (coding !== 'br') {
      cases.push({
        kind: `wrong checksum, ${size} bytes`,
        body: wrongChecksum(coding, compress(jsonOfSize(size))),
        codes,
      });
    }
  }
  if (coding !== 'br') cases.push({ kind: "issue 28's reproducer", body: issue28Reproducer(coding), codes: [413] });
  return cases;
}

/** Sends `request` on a connection of its own; resolves with all it received until the service closed it. */
function exchange(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
    socket.write(request);
  });
}

/** An answer as raw HTTP/1.1: status, headers (lower-case names) and body. */
function parseAnswer(raw: string): { status: number; headers: Map<string, string>; body: string } {
  const [head = '', ...rest] = raw.split('\r\n\r\n');
  const [statusLine = '', ...fields] = head.split('\r\n');
  const headers = new Map(
    fields.map((field) => {
      const colon = field.indexOf(':');
      return [field.slice(0, colon).toLowerCase(), field.slice(colon + 1).trim()] as const;
    }),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
}

/** Far more than the service may read of a body it refused: the client offers a gibibyte. */
const OFFERED_BYTES = 1024 ** 3;

/**
 * Sends `head`, then body bytes as fast as the connection takes them (chunks of 64 KiB, framed
 * for chunked transfer when `chunked`), until the service closes the connection. The client keeps
 * its sending side open after the service's (allowHalfOpen), as a client that does not read would.
 * Resolves with the answer received and the bytes the client got to send (head included).
 */
function uploadUntilClosed(url: string, head: string, chunked: boolean): Promise<{ answer: string; sent: number }> {
  const { hostname, port } = new URL(url);
  const data = Buffer.alloc(64 * 1024, 0x7b);
  const chunk = chunked ? Buffer.concat([Buffer.from('10000\r\n'), data, Buffer.from('\r\n')]) : data;
  return new Promise((resolve) => {
    const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true });
    let answer = '';
    let closed = false;
    socket.on('data', (received: Buffer) => {
      answer += received.toString('latin1');
    });
    // Writing on after the service stopped reading ends in a reset (EPIPE, ECONNRESET): expected.
    socket.on('error', () => {});
    socket.on('close', () => {
      closed = true;
      resolve({ answer, sent: socket.bytesWritten });
    });
    const pump = () => {
      while (!closed && socket.bytesWritten < OFFERED_BYTES) {
        if (!socket.write(chunk)) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    socket.on('connect', () => {
      socket.write(head);
      pump();
    });
  });
}

/** Error-level lines (pino's `error` and `fatal`) and crashes in a process's output. */
function errorLines(output: string): string[] {
  return output.split('\n').filter((line) => /"level":"(error|fatal)"|Unhandled|uncaught/i.test(line));
}

describe.each(testEngines())('request bodies, the service as a process on %s', (engine) => {
  let storage: TestStorage;
  let service: ServiceProcess;
  const tokens = { admin: '', reader: '', limited: '' };

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    const db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir });
    try {
      tokens.admin = (await db.issueToken(testToken({ name: 'admin', scopes: SCOPES }))).token;
      tokens.reader = (await db.issueToken(testToken({ name: 'reader', scopes: ['plants:read'] }))).token;
      tokens.limited = (
        await db.issueToken(
          testToken({ name: 'limited', scopes: SCOPES, rateLimit: { requests: 1, perSeconds: 3600 } }),
        )
      ).token;
    } finally {
      await db.close();
    }
    service = await startServiceProcess(storageEnv(storage));
  });

  afterAll(async () => {
    await service?.kill();
    await storage?.dispose();
  });

  /** The process still serves: a plant is created and read back, and nothing was logged as an error. */
  async function expectServingWithoutErrors(id: number): Promise<void> {
    expect(service.alive()).toBe(true);
    const created = await request(service.url, '/plants', {
      body: `{"id": ${id}, "name": "After"}`,
      token: tokens.admin,
    });
    expect(created.status).toBe(200);
    expect((await request(service.url, `/plants/${id}`, { token: tokens.admin })).text).toBe(
      `{"id":${id},"name":"After"}`,
    );
    expect(errorLines(service.output())).toEqual([]);
  }

  it('answers every body that does not decode, on every body route and coding, with the contract status and code', async () => {
    const answers: string[] = [];
    const expected: string[] = [];
    for (const coding of CODINGS) {
      for (const { kind, body, codes } of bodyCases(coding)) {
        for (const { path, faultStatus } of BODY_ROUTES) {
          const response = await request(service.url, path, {
            body,
            token: tokens.admin,
            headers: { 'content-encoding': coding },
          });
          const code = (response.body as { error?: bigint } | undefined)?.error;
          const allowed = codes.map((each) => `${faultStatus(each)} ${each}`);
          const answer = `${response.status} ${code}`;
          // One line per request, so that a failure names every case that went wrong.
          answers.push(`${coding} ${kind} ${path}: ${allowed.includes(answer) ? 'as the contract says' : answer}`);
          expected.push(`${coding} ${kind} ${path}: as the contract says`);
        }
        const resend = await request(service.url, RESEND_PATH, {
          body,
          token: tokens.admin,
          headers: { 'content-encoding': coding },
        });
        answers.push(`${coding} ${kind} ${RESEND_PATH}: ${resend.status}`);
        expected.push(`${coding} ${kind} ${RESEND_PATH}: 404`);
      }
    }
    expect(answers).toEqual(expected);
    await expectServingWithoutErrors(1);
  });

  it("answers issue 28's reproducer (gzip, a wrong CRC past the limit) with 413 and stays up", async () => {
    const response = await request(service.url, '/plants', {
      body: issue28Reproducer('gzip'),
      token: tokens.admin,
      headers: { 'content-encoding': 'gzip' },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 413n, message: 'request body is larger than the limit of 65536 bytes' });
    await expectServingWithoutErrors(2);
  });

  // The body routes added since share the same reader: each refuses what does not decode, or
  // decodes past the limit, with its contract status before it looks for what the path names.
  it.each([
    ['PATCH', '/plants/77'],
    ['PATCH', '/webhooks/00000000-0000-4000-8000-000000000000'],
    ['POST', '/webhooks/00000000-0000-4000-8000-000000000000/secret'],
  ])(
    'answers %s %s as the first body routes: 413 past the limit, 400 cut short, and stays up',
    async (method, path) => {
      const answers: string[] = [];
      for (const coding of ['gzip', 'deflate'] as const) {
        for (const [body, expected] of [
          [issue28Reproducer(coding), 413],
          [truncated(compressors[coding](jsonOfSize(1000))), 400],
          [GARBAGE, 400],
        ] as const) {
          const response = await request(service.url, path, {
            method,
            body,
            token: tokens.admin,
            headers: { 'content-encoding': coding },
          });
          const code = (response.body as { error?: bigint } | undefined)?.error;
          answers.push(`${coding} ${expected}: ${response.status} ${code}`);
        }
      }
      expect(answers).toEqual(
        ['gzip', 'deflate'].flatMap((coding) => [
          `${coding} 413: 413 413`,
          `${coding} 400: 400 400`,
          `${coding} 400: 400 400`,
        ]),
      );
      await expectServingWithoutErrors(4);
    },
  );

  it.each([
    ['a chunk size 0x0', '', '0x0\r\n\r\n'],
    ['a chunk size 0x0 after a chunk', '', '5\r\n{"a":\r\n0x0\r\n\r\n'],
    ['a chunk size that is no number', '', 'zz\r\n{}\r\n0\r\n\r\n'],
    ['a chunk size 0x0 in a gzip body', 'Content-Encoding: gzip\r\n', '0x0\r\n\r\n'],
  ])(
    'answers malformed chunked framing (%s) with 400 in the Error shape, logging no error',
    async (_label, coding, chunks) => {
      for (const { path } of BODY_ROUTES) {
        const raw = await exchange(
          service.url,
          `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tokens.admin}\r\nContent-Type: application/json\r\n${coding}Transfer-Encoding: chunked\r\n\r\n${chunks}`,
        );
        const answer = parseAnswer(raw);
        expect({ path, status: answer.status }).toEqual({ path, status: 400 });
        expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(answer.headers.get('connection')).toBe('close');
        expect(answer.body).toBe(
          '{"error":400,"message":"malformed chunked request body: invalid chunk size or extensions"}',
        );
      }
      await expectServingWithoutErrors(3);
      // The requests Koa had in hand end as 400s (their body cut short), never as 500s.
      expect(service.output()).not.toContain('"status":500');
    },
  );

  describe('a refusal before the body has arrived', () => {
    /** What the client offers and how the service refuses it. */
    const refusals: Array<{
      label: string;
      path: string;
      headers: () => string;
      chunked?: boolean;
      /** A request first, so that this one is refused (the rate-limited token's one request). */
      before?: () => Promise<unknown>;
      status: number;
      code: number;
    }> = [
      { label: 'no token (401)', path: '/plants', headers: () => '', status: 401, code: 401 },
      {
        label: 'an unknown token (401)',
        path: '/webhooks',
        headers: () => 'Authorization: Bearer pst_unknown\r\n',
        status: 401,
        code: 401,
      },
      {
        label: 'a token without the scope (403)',
        path: '/plants',
        headers: () => `Authorization: Bearer ${tokens.reader}\r\n`,
        status: 403,
        code: 403,
      },
      {
        label: 'a token over its rate limit (429)',
        path: '/tokens',
        headers: () => `Authorization: Bearer ${tokens.limited}\r\n`,
        before: () => request(service.url, '/tokens', { token: tokens.limited }),
        status: 429,
        code: 429,
      },
      {
        label: 'a body that is not JSON (415)',
        path: '/webhooks',
        headers: () => `Authorization: Bearer ${tokens.admin}\r\nContent-Type: text/plain\r\n`,
        status: 415,
        code: 415,
      },
      {
        label: 'a Content-Length over the limit (413)',
        path: '/tokens',
        headers: () => `Authorization: Bearer ${tokens.admin}\r\n`,
        status: 413,
        code: 413,
      },
      {
        label: 'a chunked body that passes the limit (413, HTTP 400 on POST /plants)',
        path: '/plants',
        headers: () => `Authorization: Bearer ${tokens.admin}\r\n`,
        chunked: true,
        status: 400,
        code: 413,
      },
      {
        label: 'a gzip body that does not decode (400)',
        path: '/webhooks',
        headers: () => `Authorization: Bearer ${tokens.admin}\r\nContent-Encoding: gzip\r\n`,
        status: 400,
        code: 400,
      },
    ];

    it.each(refusals)(
      'answers $label, then closes the connection having read a bounded part of a 1 GiB upload',
      async ({ path, headers, chunked, before, status, code }) => {
        await before?.();
        const framing = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${OFFERED_BYTES}`;
        const contentType = headers().includes('Content-Type') ? '' : 'Content-Type: application/json\r\n';
        const { answer, sent } = await uploadUntilClosed(
          service.url,
          `POST ${path} HTTP/1.1\r\nHost: x\r\n${headers()}${contentType}${framing}\r\n\r\n`,
          chunked === true,
        );
        const { status: answered, headers: fields, body } = parseAnswer(answer);
        expect({ answered, error: (JSON.parse(body) as { error: number }).error }).toEqual({
          answered: status,
          error: code,
        });
        expect(fields.get('connection')).toBe('close');
        // Read at most LINGER_MAX_BYTES after the answer; the rest of what the client got to send sat
        // in the connection's buffers until it closed. Without the bound, all of the gibibyte.
        expect(sent).toBeLessThan(64 * 1024 * 1024);
      },
    );

    it('keeps the connection when the whole of a small refused body has arrived with its headers', async () => {
      const raw = await exchange(
        service.url,
        'POST /plants HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}' +
          'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      );
      // Both answered on the one connection: the 401, then the health check sent behind it.
      expect(raw).toMatch(
        /^HTTP\/1\.1 401 [\s\S]*\r\nConnection: keep-alive\r\n[\s\S]*HTTP\/1\.1 200 [\s\S]*\{"status":"ok"\}$/,
      );
    });

    it('still serves, having logged no error', async () => {
      await expectServingWithoutErrors(4);
    });
  });
});
