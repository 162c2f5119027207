import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AuthenticatedToken } from '@plant-store/db';
import { createTestStorage, type TestStorage, testEngines, testToken } from '@plant-store/db/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { createLogger } from '../logger.js';
import { failOnContractViolations } from '../test-support/checked-fetch.js';
import { request, startTestService, type TestService } from '../test-support/test-service.js';
import { readRequestId } from './request-id.js';

failOnContractViolations();

type LogEntry = Record<string, unknown>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ACCESS_LINE_KEYS = [
  'durationMs',
  'hostname',
  'level',
  'message',
  'method',
  'pid',
  'requestId',
  'route',
  'status',
  'time',
];

function entries(service: { logs: string[] }): LogEntry[] {
  return service.logs.map((line) => JSON.parse(line) as LogEntry);
}

function accessLine(service: { logs: string[] }, requestId: string): LogEntry | undefined {
  return entries(service).find((entry) => entry.message === 'request' && entry.requestId === requestId);
}

describe('readRequestId', () => {
  it('keeps a sane client id and replaces anything else with a UUID', () => {
    for (const sane of ['a', 'req-1', 'Abc.DEF_09:x-y', '0f8fad5b-d9cb-469f-a165-70867728950e', 'x'.repeat(128)]) {
      expect(readRequestId(sane)).toBe(sane);
    }
    for (const insane of [
      undefined,
      '',
      'x'.repeat(129),
      'a b',
      'a,b',
      'id\n{"level":"fatal"}',
      '<script>',
      'ümlaut',
      'a/b',
    ]) {
      expect(readRequestId(insane)).toMatch(UUID);
    }
    expect(readRequestId(undefined)).not.toBe(readRequestId(undefined));
  });
});

describe.each(testEngines())('request ids and access lines on %s', (engine) => {
  let storage: TestStorage;
  let service: TestService;
  let token: string;

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    // trace: the most verbose level, where nothing secret may appear either.
    service = await startTestService(storage, { LOG_LEVEL: 'trace' });
    token = (await service.db.issueToken(testToken({ name: 'logs', scopes: ['plants:read', 'plants:write'] }))).token;
  });
  afterAll(async () => {
    await service?.close();
    await storage?.dispose();
  });

  it('generates a request id when none is sent, and echoes it', async () => {
    const first = await request(service.url, '/healthz');
    const second = await request(service.url, '/healthz');
    const id = first.headers.get('x-request-id') ?? '';
    expect(id).toMatch(UUID);
    expect(second.headers.get('x-request-id')).not.toBe(id);
    expect(accessLine(service, id)).toMatchObject({ route: '/healthz', status: 200 });
  });

  it('accepts a sane client id, on successes and on errors alike', async () => {
    for (const [path, status] of [
      ['/healthz', 200],
      ['/plants/12', 401],
      ['/nope', 404],
    ] as const) {
      const id = `client-${status}:abc.DEF_1`;
      const response = await request(service.url, path, { headers: { 'X-Request-Id': id } });
      expect(response.status).toBe(status);
      expect(response.headers.get('x-request-id')).toBe(id);
      expect(accessLine(service, id)).toMatchObject({ status });
    }
  });

  it('refuses an insane client id and uses a new one instead', async () => {
    for (const insane of ['x'.repeat(129), 'two words', 'a,b', '{"level":"fatal"}']) {
      const response = await request(service.url, '/healthz', { headers: { 'X-Request-Id': insane } });
      const id = response.headers.get('x-request-id') ?? '';
      expect(id).toMatch(UUID);
      expect(accessLine(service, id)).toBeDefined();
      expect(service.logs.join('')).not.toContain(insane);
    }
  });

  it('writes one access line per request: id, method, route pattern, status, duration, the token name, nothing else', async () => {
    const cases = [
      { path: '/plants/9007199254740993', method: 'GET', route: '/plants/:id', status: 404, named: true },
      { path: '/plants/abc', method: 'DELETE', route: '/plants/:id', status: 400, named: true },
      { path: '/plants?limit=1&tag=secret-tag', method: 'GET', route: '/plants', status: 200, named: true },
      // No route, so no authentication: no token named.
      { path: '/no/such/path', method: 'GET', route: 'unmatched', status: 404, named: false },
      { path: '/plants', method: 'PUT', route: 'unmatched', status: 405, named: false },
    ];
    for (const [index, { path, method, route, status, named }] of cases.entries()) {
      const id = `access-${index}`;
      const response = await request(service.url, path, { method, token, headers: { 'X-Request-Id': id } });
      expect(response.status).toBe(status);
      const lines = entries(service).filter((entry) => entry.requestId === id);
      expect(lines).toHaveLength(1);
      const [line] = lines;
      expect(Object.keys(line ?? {}).sort()).toEqual(
        named ? [...ACCESS_LINE_KEYS, 'tokenName'].sort() : ACCESS_LINE_KEYS,
      );
      expect(line).toMatchObject({ level: 'info', message: 'request', method, route, status });
      if (named) expect(line?.tokenName).toBe('logs');
      expect(line?.durationMs).toEqual(expect.any(Number));
      expect(line?.durationMs).toBeGreaterThanOrEqual(0);
      expect(Date.parse(String(line?.time))).not.toBeNaN();
    }
    const all = service.logs.join('');
    expect(all).not.toContain('9007199254740993');
    expect(all).not.toContain('secret-tag');
  });

  it('never logs a token, an Authorization header or a body, even at trace level', async () => {
    const marker = 'BODY-MARKER-do-not-log';
    const valid = `{"id": 4242, "name": "${marker}"}`;
    const attempts = [
      await request(service.url, '/plants', { body: valid, token }),
      await request(service.url, '/plants', { body: `{"id": 4242, "name": "${marker}-other"}`, token }),
      await request(service.url, '/plants', { body: `{"id": "4243", "name": "${marker}"}`, token }),
      await request(service.url, '/plants', { body: `{not json ${marker}`, token }),
      await request(service.url, '/plants', { body: valid, token: `${token}x` }),
      await request(service.url, '/plants/4242', { token }),
      await request(service.url, '/plants', { body: valid, headers: { authorization: `Basic ${marker}` } }),
    ];
    expect(attempts.map((response) => response.status)).toEqual([200, 400, 400, 400, 401, 200, 401]);
    expect(service.logs.length).toBeGreaterThan(attempts.length);
    for (const line of service.logs) {
      expect(line).not.toContain(token);
      expect(line).not.toContain(marker);
      expect(line.toLowerCase()).not.toContain('bearer');
      expect(line.toLowerCase()).not.toContain('authorization');
    }
  });
});

describe.each(testEngines())('LOG_LEVEL on %s', (engine) => {
  let storage: TestStorage;
  let service: TestService;

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    service = await startTestService(storage, { LOG_LEVEL: 'warn' });
  });
  afterAll(async () => {
    await service?.close();
    await storage?.dispose();
  });

  it('writes only lines at the configured level or above', async () => {
    const response = await request(service.url, '/healthz');
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toMatch(UUID);
    // Not even "listening" (info) or the access line (info).
    expect(service.logs).toEqual([]);
  });
});

describe('request errors (a unit, with a fake repository that fails)', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    server = undefined;
  });

  it('logs a 500 with the error, the request id and the route, and answers the id', async () => {
    const lines: string[] = [];
    const record: AuthenticatedToken = {
      id: '00000000-0000-0000-0000-000000000000',
      name: 'unit',
      team: 'default',
      scopes: ['plants:read'],
      expiresAt: null,
      rateLimit: null,
    };
    const app = createApp({
      db: {
        authenticateToken: async () => record,
        recordTokenUse: () => {},
        knowsToken: () => false,
        createPlant: async () => {
          throw new Error('not used');
        },
        findPlant: async () => {
          throw new Error('disk on fire', { cause: Object.assign(new Error('EIO'), { code: 'EIO' }) });
        },
        listPlants: async () => ({ json: '[]', lastId: undefined, hasMore: false }),
        updatePlant: async () => ({ outcome: 'missing' }),
        deletePlant: async () => ({ outcome: 'missing' }),
        importPlants: async () => {
          throw new Error('not used');
        },
        exportPlants: async () => {
          throw new Error('not used');
        },
        listEvents: async () => ({ expired: false, json: '[]', lastCursor: undefined, hasMore: false }),
        currentEventCursor: async () => '1.0',
        ping: async () => {},
        createWebhook: async () => {
          throw new Error('not used');
        },
        listWebhooks: async () => [],
        deleteWebhook: async () => false,
        listDeliveries: async () => null,
        resendDelivery: async () => null,
        updateWebhook: async () => null,
        rotateWebhookSecret: async () => null,
        sendWebhookTest: async () => null,
        resendDeliveries: async () => null,
        listAuditEvents: async () => ({ events: [], hasMore: false }),
        issueToken: async () => {
          throw new Error('not used');
        },
        listTokens: async () => [],
        revokeToken: async () => {
          throw new Error('not used');
        },
      },
      bodyLimitBytes: 1024,
      // error level: the 500 is logged, access lines (info) are not.
      log: createLogger({ level: 'error', destination: { write: (line) => lines.push(line) } }),
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server?.once('listening', resolve));
    const { port } = server.address() as AddressInfo;

    const response = await request(`http://127.0.0.1:${port}`, '/plants/7', {
      token: 'pst_secret-token-value',
      headers: { 'X-Request-Id': 'failing-1' },
    });
    expect(response.status).toBe(500);
    expect(response.headers.get('x-request-id')).toBe('failing-1');
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0] ?? '') as LogEntry;
    expect(line).toMatchObject({
      level: 'error',
      message: 'request failed',
      requestId: 'failing-1',
      method: 'GET',
      route: '/plants/:id',
      err: { type: 'Error', message: 'disk on fire', cause: { type: 'Error', message: 'EIO', code: 'EIO' } },
    });
    expect(line.err).toMatchObject({ stack: expect.stringContaining('disk on fire') });
    expect(lines[0]).not.toContain('pst_secret-token-value');
  });
});
