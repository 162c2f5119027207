import { getEventListeners } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { createSafeAgent, type PostWebhookResult, postWebhook } from './safe-http.js';
import type { ResolveHost } from './url-policy.js';

/**
 * Test-only certificate and key for `receiver.example` (self-signed, valid until 2126): trusted
 * by nothing but the agents these tests make.
 */
const RECEIVER_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgfRQ+6I7QHUj2bmsY
ZrLbDGHci2Kl0Qo+h7ceK2mMIwKhRANCAATao9WO+Ib9ot3rFYupS8+Bq/8Sen+n
FOkghcnr6xlCvpnXxnK683zdzSoGf6K5EVecPNZx65yNddCGbCF8bOfF
-----END PRIVATE KEY-----
`;
const RECEIVER_CERT = `-----BEGIN CERTIFICATE-----
MIIBqjCCAVCgAwIBAgIUDJsXbua7RHDOuhdrbUEeTAsw7qYwCgYIKoZIzj0EAwIw
GzEZMBcGA1UEAwwQcmVjZWl2ZXIuZXhhbXBsZTAgFw0yNjExMjMxNTI2MTJaGA8y
MTI2MTAzMDE1MjYxMlowGzEZMBcGA1UEAwwQcmVjZWl2ZXIuZXhhbXBsZTBZMBMG
ByqGSM49AgEGCCqGSM49AwEHA0IABNqj1Y74hv2i3esVi6lLz4Gr/xJ6f6cU6SCF
yevrGUK+mdfGcrrzfN3NKgZ/orkRV5w81nHrnI110IZsIXxs58WjcDBuMB0GA1Ud
DgQWBBRV2EqZu2sHfBVUSYwq0vSPJ7ZV5zAfBgNVHSMEGDAWgBRV2EqZu2sHfBVU
SYwq0vSPJ7ZV5zAPBgNVHRMBAf8EBTADAQH/MBsGA1UdEQQUMBKCEHJlY2VpdmVy
LmV4YW1wbGUwCgYIKoZIzj0EAwIDSAAwRQIhAOW9qJDMaC810EIKEimHkF7uMM5/
bPNy+aE8bqqrXGB4AiAXdXZmkuq06nZDCOy59IZdimubpIpJtxtAJGXuSZDBXg==
-----END CERTIFICATE-----
`;

interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  /** The TLS server name the client sent (https only). */
  readonly servername: string | false | null | undefined;
}

interface TestServer {
  readonly port: number;
  readonly received: Received[];
  close(): Promise<void>;
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A real server on a loopback port: records each request, then lets `answer` respond. */
async function serve(
  answer: (response: ServerResponse, request: IncomingMessage) => void,
  tls?: { key: string; cert: string },
): Promise<TestServer> {
  const received: Received[] = [];
  const handler = (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const socket = request.socket as Partial<TLSSocket>;
      received.push({
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        servername: socket.servername,
      });
      answer(response, request);
    });
  };
  const server: Server = tls ? createHttpsServer(tls, handler) : createHttpServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  cleanups.push(close);
  return { port: (server.address() as AddressInfo).port, received, close };
}

function resolving(address: string): ResolveHost {
  return async () => [{ address }];
}

const body = '{"id":9007199254740993,"name":"Monstera"}';
const headers = { 'content-type': 'application/json', 'webhook-id': 'msg_1' };

interface PostOptions {
  /** The agent's: default true (the test receivers are on loopback). */
  readonly allowPrivateNetworks?: boolean;
  readonly resolve?: ResolveHost;
  readonly ca?: string;
  /** The attempt's deadline: default 5 s. */
  readonly timeoutMs?: number;
  readonly maxResponseBytes?: number;
  readonly signal?: AbortSignal;
}

/** POSTs the test body and headers to `url`, through an agent of its own (closed after the test). */
function post(url: string, options: PostOptions = {}): Promise<PostWebhookResult> {
  const { allowPrivateNetworks = true, resolve, ca, timeoutMs = 5_000, ...attempt } = options;
  const agent = createSafeAgent({
    allowPrivateNetworks,
    timeoutMs: 5_000,
    ...(resolve === undefined ? {} : { resolve }),
    ...(ca === undefined ? {} : { ca }),
  });
  cleanups.push(() => agent.destroy());
  return postWebhook(agent, url, body, headers, { timeoutMs, ...attempt });
}

/** `http://127.0.0.1:<port><path>`: a test receiver. */
const local = (port: number, path = '/') => `http://127.0.0.1:${port}${path}`;

describe('postWebhook', () => {
  it('POSTs the body exactly as given, with the headers, and reports a 2xx as success', async () => {
    const receiver = await serve((response) => response.writeHead(204).end());
    const result = await post(local(receiver.port, '/hook?x=1'));
    expect(result).toMatchObject({ statusCode: 204, error: null });
    expect(result.latencyMs).toBeGreaterThanOrEqual(0);
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]).toMatchObject({ method: 'POST', url: '/hook?x=1', body });
    expect(receiver.received[0]?.headers).toMatchObject({ 'content-type': 'application/json', 'webhook-id': 'msg_1' });
  });

  it('reports any other status as a failure, with the status and the start of the answer', async () => {
    const receiver = await serve((response) => response.writeHead(503).end('busy'));
    expect(await post(local(receiver.port))).toMatchObject({
      statusCode: 503,
      error: 'HTTP 503',
      responseExcerpt: 'busy',
    });
  });

  it('keeps the first 256 bytes of a long answer as text, a character cut at the bound left out', async () => {
    // 255 bytes of ASCII, then a 2-byte character across the bound, then more.
    const receiver = await serve((response) => response.writeHead(500).end(`${'a'.repeat(255)}é${'b'.repeat(5000)}`));
    const result = await post(local(receiver.port));
    expect(result.responseExcerpt).toBe('a'.repeat(255));
    const empty = await serve((response) => response.writeHead(204).end());
    expect((await post(local(empty.port))).responseExcerpt).toBeNull();
  });

  it('records a status HTTP does not define as no status, so the delivery log keeps to its contract', async () => {
    // A receiver that writes its own status line: undici passes on any three digits from 100 up.
    const answering = async (statusLine: string) => {
      const server = createTcpServer((socket) =>
        socket.once('data', () => socket.end(`HTTP/1.1 ${statusLine}\r\ncontent-length: 0\r\n\r\n`)),
      );
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      cleanups.push(() => new Promise((resolve) => server.close(resolve)));
      return (server.address() as AddressInfo).port;
    };
    expect(await post(local(await answering('999 Weird')))).toMatchObject({
      statusCode: null,
      error: 'invalid HTTP status 999',
      errorType: 'invalid_response',
    });
    expect(await post(local(await answering('600 Weird')))).toMatchObject({
      statusCode: null,
      error: 'invalid HTTP status 600',
    });
    expect(await post(local(await answering('099 Weird')))).toMatchObject({
      statusCode: null,
      error: 'invalid HTTP response',
      errorType: 'invalid_response',
    });
    expect(await post(local(await answering('599 Edge')))).toMatchObject({ statusCode: 599, error: 'HTTP 599' });
  });

  it('does not follow a redirect: the 3xx is the answer, and its target sees nothing', async () => {
    const target = await serve((response) => response.writeHead(200).end());
    const receiver = await serve((response) =>
      response.writeHead(307, { location: local(target.port, '/elsewhere') }).end(),
    );
    const result = await post(local(receiver.port));
    expect(result).toMatchObject({ statusCode: 307, error: 'HTTP 307 (redirects are not followed)' });
    expect(receiver.received).toHaveLength(1);
    expect(target.received).toHaveLength(0);
  });

  it('reads a few KiB of the response body, then hangs up on a receiver that sends without end', async () => {
    let written = 0;
    let hungUp: () => void = () => {};
    const closed = new Promise<void>((resolve) => {
      hungUp = resolve;
    });
    const receiver = await serve((response) => {
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const pump = () => {
        while (!response.destroyed && written < 1024 * 1024 * 1024) {
          written += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
      };
      response.on('close', hungUp);
      pump();
    });
    const result = await post(local(receiver.port), { maxResponseBytes: 4096 });
    // Reading it all would end at the 5 s deadline with a timeout (1 GiB); the connection is
    // dropped instead, which the receiver sees as a hang-up long before its 1 GiB is written.
    expect(result).toMatchObject({ statusCode: 200, error: null });
    await closed;
    // What the kernel's socket buffers absorbed, not what was read: far below what was on offer.
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });

  it('times out a receiver that never answers, within the deadline and a small margin', async () => {
    const receiver = await serve(() => {});
    const result = await post(local(receiver.port), { timeoutMs: 300 });
    // The attempt's own deadline ended it (the receiver never answers); a timer never fires early.
    expect(result).toMatchObject({ statusCode: null, error: 'timed out after 300 ms', errorType: 'timeout' });
    expect(result.latencyMs).toBeGreaterThanOrEqual(290);
  });

  it('says timed out in seconds for a whole number of them', async () => {
    const receiver = await serve(() => {});
    expect((await post(local(receiver.port), { timeoutMs: 1_000 })).error).toBe('timed out after 1 s');
  });

  it('keeps the status when the body trickles past the deadline, and returns at the deadline', async () => {
    const receiver = await serve((response) => {
      response.writeHead(200);
      const timer = setInterval(() => response.write('.'), 50);
      response.on('close', () => clearInterval(timer));
    });
    // The body never ends: that the attempt returns at all is the deadline's doing.
    const result = await post(local(receiver.port), { timeoutMs: 400 });
    expect(result).toMatchObject({ statusCode: 200, error: null });
  });

  it('reports a refused connection', async () => {
    const closed = await serve(() => {});
    await closed.close();
    expect(await post(local(closed.port))).toMatchObject({
      statusCode: null,
      error: 'connection refused',
      errorType: 'ECONNREFUSED',
    });
  });

  it('stops at once when its signal aborts', async () => {
    const controller = new AbortController();
    // Aborted once the request has arrived; the default deadline (10 s) would say 'timed out'.
    const receiver = await serve(() => controller.abort());
    const result = await post(local(receiver.port), { signal: controller.signal });
    expect(result).toMatchObject({ statusCode: null, error: 'aborted', errorType: 'aborted' });
  });

  it("leaves nothing behind on the caller's signal once an attempt is over", async () => {
    // The dispatcher passes one shutdown signal to every attempt for the life of the process:
    // whatever an attempt hangs on it must go when the attempt does, or memory grows with every
    // delivery. (AbortSignal.any keeps one entry per derived signal on it: Node 20 for ever.)
    const receiver = await serve((response) => response.writeHead(204).end());
    const shutdown = new AbortController();
    for (let index = 0; index < 20; index++) {
      expect(await post(local(receiver.port), { signal: shutdown.signal })).toMatchObject({ statusCode: 204 });
    }
    const failed = await serve(() => {});
    expect(await post(local(failed.port), { signal: shutdown.signal, timeoutMs: 50 })).toMatchObject({
      error: 'timed out after 50 ms',
    });
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
    const dependants = Object.getOwnPropertySymbols(shutdown.signal).find(
      (symbol) => symbol.description === 'kDependantSignals',
    );
    const held = dependants && (shutdown.signal as unknown as Record<symbol, Set<unknown> | undefined>)[dependants];
    expect(held?.size ?? 0).toBe(0);
  });
});

describe('createSafeAgent', () => {
  it('refuses to connect to a loopback address unless private networks are allowed', async () => {
    const receiver = await serve((response) => response.writeHead(200).end());
    for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]']) {
      expect(await post(`http://${host}:${receiver.port}/`, { allowPrivateNetworks: false })).toMatchObject({
        statusCode: null,
        error:
          'address not allowed (loopback 127.0.0.1); set WEBHOOKS_ALLOW_PRIVATE_NETWORKS=true for receivers on private networks',
      });
    }
    expect(receiver.received).toHaveLength(0);
  });

  it('checks the address at connect time: a name that now resolves to loopback is refused (DNS rebinding)', async () => {
    const receiver = await serve((response) => response.writeHead(200).end());
    const url = `http://rebind.example:${receiver.port}/hook`;
    const refused = await post(url, { allowPrivateNetworks: false, resolve: resolving('127.0.0.1') });
    expect(refused).toMatchObject({
      statusCode: null,
      error:
        'a resolved address is not allowed (not public); set WEBHOOKS_ALLOW_PRIVATE_NETWORKS=true for receivers on private networks',
      errorType: 'address_not_allowed',
    });
    // One bad address among good ones is enough to refuse.
    const mixed: ResolveHost = async () => [{ address: '93.184.215.14' }, { address: '10.0.0.7' }];
    const refusedToo = await post(url, { allowPrivateNetworks: false, resolve: mixed });
    expect(refusedToo).toMatchObject({
      statusCode: null,
      error: expect.stringMatching(/^a resolved address is not allowed/),
    });
    expect(refusedToo.error).not.toContain('10.0.0.7');
    expect(receiver.received).toHaveLength(0);

    // Allowed, it dials the resolved address and keeps the name in the Host header.
    const allowed = await post(url, { resolve: resolving('127.0.0.1') });
    expect(allowed).toMatchObject({ statusCode: 200, error: null });
    expect(receiver.received[0]?.headers.host).toBe(`rebind.example:${receiver.port}`);
  });

  it('reports a name that does not resolve', async () => {
    const notFound: ResolveHost = async (host) => {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    };
    expect(await post('http://nowhere.example/', { resolve: notFound })).toMatchObject({
      statusCode: null,
      error: 'DNS lookup failed (ENOTFOUND)',
    });
    expect(await post('http://nowhere.example/', { resolve: async () => [] })).toMatchObject({
      statusCode: null,
      error: 'DNS lookup failed (ENODATA)',
    });
  });

  it('speaks TLS to the checked address with the host name as SNI, so the certificate verifies', async () => {
    const receiver = await serve((response) => response.writeHead(200).end(), {
      key: RECEIVER_KEY,
      cert: RECEIVER_CERT,
    });
    const result = await post(`https://receiver.example:${receiver.port}/hook`, {
      resolve: resolving('127.0.0.1'),
      ca: RECEIVER_CERT,
    });
    expect(result).toMatchObject({ statusCode: 200, error: null });
    expect(receiver.received[0]).toMatchObject({ servername: 'receiver.example', body });
    expect(receiver.received[0]?.headers.host).toBe(`receiver.example:${receiver.port}`);
  });

  it('reports a certificate that does not match the host as a TLS error', async () => {
    const receiver = await serve((response) => response.writeHead(200).end(), {
      key: RECEIVER_KEY,
      cert: RECEIVER_CERT,
    });
    const wrongName = await post(`https://other.example:${receiver.port}/`, {
      resolve: resolving('127.0.0.1'),
      ca: RECEIVER_CERT,
    });
    expect(wrongName.statusCode).toBeNull();
    expect(wrongName.error).toMatch(/^TLS error: .*other\.example/);
    const untrusted = await post(`https://receiver.example:${receiver.port}/`, { resolve: resolving('127.0.0.1') });
    expect(untrusted.error).toMatch(/^TLS error: /);
    expect(receiver.received).toHaveLength(0);
  });
});
