import { Agent, createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../test-support/wait-until.js';
import { createRequestLoad, type RequestLoad } from './request-load.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A real server whose requests wait until `answerAll` (or their client goes away). */
async function startServer(load: RequestLoad) {
  const waiting: ServerResponse[] = [];
  const server = createServer(load.track((_request, response) => void waiting.push(response)));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    /** Sends a request; resolves once the server holds it. */
    async send(): Promise<{ abort(): void }> {
      const before = waiting.length;
      const sent = request({ port, host: '127.0.0.1', path: '/', agent: false });
      sent.on('error', () => {});
      sent.end();
      await waitUntil(() => waiting.length > before);
      return { abort: () => sent.destroy() };
    },
    answerAll(): void {
      for (const response of waiting.splice(0)) response.end('ok');
    },
  };
}

describe('createRequestLoad', () => {
  it('counts requests from arrival until answered or abandoned, and is busy while `threshold` are in flight', async () => {
    // Busy for a second after: long enough to look, however slow the machine.
    const load = createRequestLoad(3, 1_000);
    const server = await startServer(load);
    await server.send();
    const second = await server.send();
    expect({ inFlight: load.inFlight(), busy: load.busy() }).toEqual({ inFlight: 2, busy: false });

    await server.send();
    expect({ inFlight: load.inFlight(), busy: load.busy() }).toEqual({ inFlight: 3, busy: true });
    // As long as they stay in flight.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(load.busy()).toBe(true);

    // A client that goes away ends its request too.
    second.abort();
    await waitUntil(() => load.inFlight() === 2);
    server.answerAll();
    await waitUntil(() => load.inFlight() === 0);
    // Busy a moment longer (a burst's gaps between answers do not end it), then not.
    expect(load.busy()).toBe(true);
    await waitUntil(() => !load.busy(), 3_000);
  });

  it('is never busy with a threshold of 0', async () => {
    const load = createRequestLoad(0);
    const server = await startServer(load);
    for (let index = 0; index < 5; index++) await server.send();
    expect({ inFlight: load.inFlight(), busy: load.busy() }).toEqual({ inFlight: 5, busy: false });
    server.answerAll();
  });
});

describe('createRequestLoad when a connection dies', () => {
  it("ends its request once, on the response's close or the connection's, never twice", async () => {
    const load = createRequestLoad(2, 10);
    const server = await startServer(load);
    const held = await server.send();
    await server.send();
    expect(load.inFlight()).toBe(2);
    held.abort();
    await waitUntil(() => load.inFlight() === 1);
    server.answerAll();
    await waitUntil(() => load.inFlight() === 0);
    // Once each: never below zero.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(load.inFlight()).toBe(0);
  });
});

describe('createRequestLoad on a kept-alive connection', () => {
  it('counts 50 requests one after another on one connection, with one listener on it', async () => {
    const load = createRequestLoad(2, 10);
    const server = createServer(load.track((_request, response) => response.end('ok')));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const sockets: Socket[] = [];
    server.on('connection', (socket: Socket) => sockets.push(socket));
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let index = 0; index < 50; index++) {
        await new Promise<void>((resolve, reject) => {
          const sent = request({ port, host: '127.0.0.1', path: '/', agent }, (response) => {
            response.resume();
            response.on('end', resolve);
          });
          sent.on('error', reject);
          sent.end();
        });
      }
      // One connection, still open: Node's own listeners and this count's one, not one per request.
      expect(sockets).toHaveLength(1);
      expect(sockets[0]?.listenerCount('close')).toBeLessThanOrEqual(3);
    } finally {
      agent.destroy();
    }
    await waitUntil(() => load.inFlight() === 0);
  });
});
