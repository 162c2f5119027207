import { request as httpRequest, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { type AuthenticatedToken, DatabaseUnavailableError, WebhookLimitError } from '@plant-store/db';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type AppDependencies, createApp, isClientGone } from './app.js';
import { createLogger } from './logger.js';
import { failOnContractViolations } from './test-support/checked-fetch.js';
import { request } from './test-support/test-service.js';

failOnContractViolations();

// Unit tests of the HTTP layer with a fake repository, for failures a real database will not
// produce on demand. The behaviour against real databases is proven in routes/*.test.ts.

const TOKEN = 'pst_unit';
const WEBHOOK_ID = '0b8f7f9e-4f0c-4a57-9c59-6d8e3f1f2a10';
const record: AuthenticatedToken = {
  id: '00000000-0000-0000-0000-000000000000',
  name: 'unit',
  team: 'default',
  scopes: ['plants:read', 'plants:write', 'webhooks:manage', 'tokens:manage'],
  expiresAt: null,
  rateLimit: null,
};

function fakeDb(overrides: Partial<AppDependencies['db']> = {}): AppDependencies['db'] {
  return {
    authenticateToken: async (token) => (token === TOKEN ? record : null),
    recordTokenUse: () => {},
    knowsToken: () => false,
    createPlant: async (plant) => ({ plant, version: 1n, created: true }),
    findPlant: async () => null,
    updatePlant: async () => ({ outcome: 'missing' }),
    resendDeliveries: async () => null,
    listPlants: async () => ({ json: '[]', lastId: undefined, hasMore: false }),
    deletePlant: async () => ({ outcome: 'missing' }),
    importPlants: async () => ({ lines: 0, stored: 0, alreadyStored: 0, events: 0 }),
    exportPlants: async () => {
      throw new Error('not used');
    },
    listEvents: async () => ({ expired: false, json: '[]', lastCursor: undefined, hasMore: false }),
    currentEventCursor: async () => '1.0',
    ping: async () => {},
    createWebhook: async (input) => ({
      id: WEBHOOK_ID,
      url: input.url,
      description: input.description ?? null,
      team: input.team,
      createdAt: new Date(0),
      eventTypes: ['plant.created'],
      enabled: true,
      disabledAt: null,
      disabledReason: null,
      previousSecretExpiresAt: null,
      secret: 'whsec_dW5pdA==',
    }),
    listWebhooks: async () => [],
    deleteWebhook: async () => false,
    listDeliveries: async () => null,
    listAuditEvents: async () => ({ events: [], hasMore: false }),
    resendDelivery: async () => null,
    updateWebhook: async () => null,
    rotateWebhookSecret: async () => null,
    sendWebhookTest: async () => null,
    issueToken: async () => {
      throw new Error('not used');
    },
    listTokens: async () => [],
    revokeToken: async () => {
      throw new Error('not used');
    },
    ...overrides,
  };
}

let server: Server | undefined;
afterEach(async () => {
  const closing = server;
  server = undefined;
  closing?.closeAllConnections();
  await new Promise((resolve) => (closing ? closing.close(resolve) : resolve(undefined)));
});

async function serve(db: AppDependencies['db']): Promise<{ url: string; errors: unknown[] }> {
  const app = createApp({ db, bodyLimitBytes: 1024 });
  const errors: unknown[] = [];
  app.on('error', (error: unknown) => errors.push(error));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server?.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, errors };
}

const body = '{"id": 1, "name": "Unit"}';

/** A repository out of reach (503 with Retry-After), and one failing unexpectedly (500, reported). */
const REPOSITORY_FAILURES = {
  503: async (): Promise<never> => {
    throw new DatabaseUnavailableError();
  },
  500: async (): Promise<never> => {
    throw new Error('secret internals');
  },
};

/** Every route that calls the repository: the call it makes, and the body it needs to get there. */
const REPOSITORY_ROUTES: ReadonlyArray<{
  readonly method: string;
  readonly path: string;
  readonly call: Exclude<keyof AppDependencies['db'], 'authenticateToken' | 'recordTokenUse' | 'knowsToken' | 'ping'>;
  readonly body?: string;
}> = [
  { method: 'GET', path: '/plants', call: 'listPlants' },
  { method: 'GET', path: '/plants/1', call: 'findPlant' },
  { method: 'DELETE', path: '/plants/1', call: 'deletePlant' },
  { method: 'POST', path: '/plants', call: 'createPlant', body },
  { method: 'POST', path: '/webhooks', call: 'createWebhook', body: '{"url": "https://8.8.8.8/hook"}' },
  { method: 'GET', path: '/webhooks', call: 'listWebhooks' },
  { method: 'DELETE', path: `/webhooks/${WEBHOOK_ID}`, call: 'deleteWebhook' },
  { method: 'GET', path: `/webhooks/${WEBHOOK_ID}/deliveries`, call: 'listDeliveries' },
  { method: 'POST', path: `/webhooks/${WEBHOOK_ID}/deliveries/1/resend`, call: 'resendDelivery' },
  { method: 'GET', path: '/tokens', call: 'listTokens' },
  { method: 'POST', path: '/tokens', call: 'issueToken', body: '{"name": "ci", "scopes": ["plants:read"]}' },
  { method: 'DELETE', path: '/tokens/ci', call: 'revokeToken' },
];

describe('createApp error rendering', () => {
  it('answers 503 with Retry-After when the database is unavailable', async () => {
    const { url } = await serve(
      fakeDb({
        createPlant: async () => {
          throw new DatabaseUnavailableError();
        },
        ping: async () => {
          throw new DatabaseUnavailableError();
        },
      }),
    );
    const created = await request(url, '/plants', { body, token: TOKEN });
    expect(created.status).toBe(503);
    expect(created.headers.get('retry-after')).toBe('1');
    expect(created.body).toEqual({ error: 503n, message: 'the database is unavailable; retry shortly' });
    const ready = await request(url, '/readyz');
    expect(ready.status).toBe(503);
  });

  it('answers 500 without details for an unexpected failure, and reports it', async () => {
    const { url, errors } = await serve(
      fakeDb({
        createPlant: async () => {
          throw new Error('secret internals at /srv/db.ts:42');
        },
      }),
    );
    const response = await request(url, '/plants', { body, token: TOKEN });
    expect(response.status).toBe(500);
    expect(response.text).toBe('{"error":500,"message":"internal error"}');
    expect(errors).toHaveLength(1);
  });

  it.each([503, 500] as const)(
    'answers %i on every route that calls the repository, in the documented shape',
    async (status) => {
      const failure = REPOSITORY_FAILURES[status];
      const overrides: Partial<AppDependencies['db']> = {};
      for (const { call } of REPOSITORY_ROUTES) overrides[call] = failure;
      const { url, errors } = await serve(fakeDb(overrides));
      for (const { method, path, body: sent } of REPOSITORY_ROUTES) {
        const response = await request(url, path, {
          method,
          token: TOKEN,
          ...(sent === undefined ? {} : { body: sent }),
        });
        expect({ method, path, status: response.status }).toEqual({ method, path, status });
        expect(response.headers.get('retry-after')).toBe(status === 503 ? '1' : null);
      }
      expect(errors).toHaveLength(status === 500 ? REPOSITORY_ROUTES.length : 0);
    },
  );

  it('answers 409 with the limit when the repository refuses another webhook', async () => {
    const { url } = await serve(
      fakeDb({
        createWebhook: async () => {
          throw new WebhookLimitError(100);
        },
      }),
    );
    const response = await request(url, '/webhooks', { body: '{"url": "https://8.8.8.8/hook"}', token: TOKEN });
    expect(response.status).toBe(409);
    expect(response.body).toEqual({ error: 409n, message: 'at most 100 webhooks may be registered; delete one first' });
  });

  it('answers 503 on auth when the token store is unavailable', async () => {
    const { url } = await serve(
      fakeDb({
        authenticateToken: async () => {
          throw new DatabaseUnavailableError();
        },
      }),
    );
    expect((await request(url, '/plants', { body, token: TOKEN })).status).toBe(503);
  });

  it('reads a gzip body and refuses an unknown Content-Encoding with error 415', async () => {
    const createPlant = vi.fn(async (plant) => ({ plant, version: 1n, created: true }));
    const { url } = await serve(fakeDb({ createPlant }));
    const gzipped = await request(url, '/plants', {
      body: gzipSync(body),
      token: TOKEN,
      headers: { 'content-encoding': 'gzip' },
    });
    expect(gzipped.status).toBe(200);
    const unknown = await request(url, '/plants', { body, token: TOKEN, headers: { 'content-encoding': 'zstd-x' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ error: 415n });
    expect(createPlant).toHaveBeenCalledTimes(1);
  });

  it('refuses a gzip body that inflates beyond the limit with error 413', async () => {
    const { url } = await serve(fakeDb());
    const bomb = gzipSync(`{"id": 1, "name": "x", "pad": "${'p'.repeat(1024 * 1024)}"}`);
    expect(bomb.length).toBeLessThan(1024 * 4);
    const response = await request(url, '/plants', {
      body: bomb,
      token: TOKEN,
      headers: { 'content-encoding': 'gzip' },
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: 413n });
  });

  it('refuses a corrupt gzip or brotli body with 400', async () => {
    const { url, errors } = await serve(fakeDb());
    for (const encoding of ['gzip', 'br', 'deflate']) {
      const response = await request(url, '/plants', {
        body: 'definitely not compressed',
        token: TOKEN,
        headers: { 'content-encoding': encoding },
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        error: 400n,
        message: 'request body could not be decompressed as its Content-Encoding says',
      });
    }
    expect(errors).toEqual([]);
  });

  it('answers a POST without any body with 400, not 415', async () => {
    const { url } = await serve(fakeDb());
    const response = await request(url, '/plants', { method: 'POST', token: TOKEN });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 400n, message: 'request body is missing' });
  });

  it('matches paths exactly: another case or a trailing slash is another path, a 404', async () => {
    const { url } = await serve(fakeDb());
    for (const [method, path] of [
      ['GET', '/PLANTS'],
      ['GET', '/Plants/1'],
      ['GET', '/plants/'],
      ['DELETE', '/plants/1/'],
      ['GET', '/openapi.json/'],
      ['GET', '/healthz/'],
    ] as const) {
      // Not through the contract-checked fetch: these are no operation of the document.
      const { status, allow, body } = await rawRequest(url, method, path);
      expect(status, `${method} ${path}`).toBe(404);
      expect(allow, `${method} ${path}`).toBeUndefined();
      expect(JSON.parse(body)).toEqual({ error: 404, message: `no route for ${method} ${path}` });
    }
    // The exact paths are served (here: authentication is asked for, so the route matched).
    expect((await rawRequest(url, 'GET', '/plants')).status).toBe(401);
    expect((await rawRequest(url, 'DELETE', '/plants/1')).status).toBe(401);
  });

  it('answers an unknown path with 404 for every method, TRACE and PROPFIND included', async () => {
    const { url } = await serve(fakeDb());
    for (const method of ['GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND']) {
      const { status, allow, body } = await rawRequest(url, method, '/nope');
      expect(status, method).toBe(404);
      expect(allow, method).toBeUndefined();
      expect(JSON.parse(body), method).toEqual({ error: 404, message: `no route for ${method} /nope` });
    }
  });

  it('repeats at most the first 120 characters of a long path in its 404 and 405 messages', async () => {
    const { url } = await serve(fakeDb());
    const long = `/${'x'.repeat(16_000)}`;
    const notFound = await rawRequest(url, 'GET', long);
    expect(notFound.status).toBe(404);
    expect(JSON.parse(notFound.body)).toEqual({
      error: 404,
      message: `no route for GET ${long.slice(0, 120)}... (16001 characters)`,
    });
    // Exactly 120 characters: shown whole.
    const exact = `/${'y'.repeat(119)}`;
    expect(JSON.parse((await rawRequest(url, 'GET', exact)).body)).toEqual({
      error: 404,
      message: `no route for GET ${exact}`,
    });
  });

  it('answers TRACE on a known path with 405 and the methods it serves', async () => {
    const { url } = await serve(fakeDb());
    const { status, allow, body } = await rawRequest(url, 'TRACE', '/plants');
    expect(status).toBe(405);
    expect(allow).toBe('HEAD, GET, POST, OPTIONS');
    expect(JSON.parse(body)).toMatchObject({ error: 405 });
  });

  it('lists in Allow every method a known path answers, OPTIONS included, and no other', async () => {
    const { url } = await serve(fakeDb());
    for (const path of ['/plants', '/plants/1', '/webhooks/x/deliveries', '/tokens/x', '/openapi.json', '/docs']) {
      const refused = await rawRequest(url, 'TRACE', path);
      expect(refused.status, path).toBe(405);
      const allowed = refused.allow?.split(', ') ?? [];
      expect(allowed, path).toContain('OPTIONS');
      const options = await rawRequest(url, 'OPTIONS', path);
      expect([options.status, options.allow], path).toEqual([200, refused.allow]);
      for (const method of allowed) {
        expect((await rawRequest(url, method, path)).status, `${method} ${path}`).not.toBe(405);
      }
      for (const method of ['GET', 'POST', 'DELETE', 'PUT', 'PATCH'].filter((name) => !allowed.includes(name))) {
        expect((await rawRequest(url, method, path)).status, `${method} ${path}`).toBe(405);
      }
    }
  });

  it('redirects /docs/ to /docs, the one address of the page', async () => {
    const { url } = await serve(fakeDb());
    const { status, location } = await rawRequest(url, 'GET', '/docs/');
    expect(status).toBe(301);
    expect(location).toBe('/docs');
  });

  it('answers a method the router implements nowhere (PROPFIND) with 405 and Allow', async () => {
    const { url } = await serve(fakeDb());
    const response = await request(url, '/plants', { method: 'PROPFIND', token: TOKEN });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('HEAD, GET, POST, OPTIONS');
    expect(response.body).toMatchObject({ error: 405n });
  });
});

/** One request through node:http, which (unlike fetch) sends any method, TRACE and CONNECT too. */
function rawRequest(
  base: string,
  method: string,
  path: string,
): Promise<{ status: number; allow: string | undefined; location: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(base);
    const outgoing = httpRequest(
      { host: target.hostname, port: target.port, method, path, headers: { connection: 'close' } },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            allow: response.headers.allow,
            location: response.headers.location,
            body,
          }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

describe('a client that hangs up', () => {
  it('is logged as a disconnect at info, without a stack, never as a failed request', async () => {
    const lines: Record<string, unknown>[] = [];
    const log = createLogger({ destination: { write: (line: string) => lines.push(JSON.parse(line)) } });
    let authenticated: () => void = () => {};
    const reachedBody = new Promise<void>((resolve) => {
      authenticated = resolve;
    });
    const db = fakeDb({
      authenticateToken: async (token) => {
        // Authentication comes just before the body is read: the read is next.
        authenticated();
        return token === TOKEN ? record : null;
      },
    });
    const app = createApp({ db, bodyLimitBytes: 1024, log });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server?.once('listening', resolve));
    const { port } = server.address() as AddressInfo;

    // Half a body, then a reset: the body read fails under the request.
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"id":1,`,
    );
    await reachedBody;
    socket.resetAndDestroy();

    await vi.waitFor(() => expect(lines.some((line) => line.message === 'client disconnected')).toBe(true));
    const disconnect = lines.find((line) => line.message === 'client disconnected');
    expect(disconnect).toMatchObject({ level: 'info', method: 'POST', route: '/plants', code: 'ECONNRESET' });
    expect(disconnect).not.toHaveProperty('err');
    expect(lines.filter((line) => line.level === 'error')).toEqual([]);
  });

  it('tells the request connection failing from the same codes on another connection', () => {
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    const ctx = (destroyed: boolean) =>
      ({ req: { destroyed, socket: { destroyed } } }) as unknown as Parameters<typeof isClientGone>[1];
    expect(isClientGone(reset, ctx(true))).toBe(true);
    // The client is still there: a reset from a database or a receiver is the service's failure.
    expect(isClientGone(reset, ctx(false))).toBe(false);
    expect(isClientGone(new Error('boom'), ctx(true))).toBe(false);
    expect(isClientGone(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }), undefined)).toBe(true);
  });
});
