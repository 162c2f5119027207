import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type ConnectionGuardOptions, guardConnections } from './connection-guard.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A real HTTP server with the guard: `GET /hold` is answered only when the test says so (a
 * request in progress), anything else at once.
 */
async function startServer(options: ConnectionGuardOptions) {
  const held: ServerResponse[] = [];
  const server: Server = createServer((request, response) => {
    if (request.url === '/hold') held.push(response);
    else response.end('ok');
  });
  const guard = guardConnections(server, options);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return { port: (server.address() as AddressInfo).port, guard, held };
}

/** A connection from `localAddress`, once the server has accepted it; `closed` tells whether the server closed it. */
async function open(port: number, localAddress: string) {
  const socket: Socket = connect({ port, host: '127.0.0.1', localAddress });
  socket.on('error', () => {});
  let answer = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    answer += chunk;
  });
  let closed = false;
  socket.once('close', () => {
    closed = true;
  });
  cleanups.push(() => {
    socket.destroy();
  });
  await once(socket, 'connect');
  return { socket, closed: () => closed, answer: () => answer };
}

describe('guardConnections', () => {
  it('at the cap, closes the longest-waiting connection of the address holding the most', async () => {
    const { port, guard } = await startServer({ max: 5, idleMs: 60_000, checkIntervalMs: 1_000 });
    const lone = await open(port, '127.0.0.1');
    const many: Array<Awaited<ReturnType<typeof open>>> = [];
    for (let index = 0; index < 4; index++) many.push(await open(port, '127.0.0.2'));
    // Half a request on the first of the many: half-sent waits as silent does.
    many[0]?.socket.write('GET / HTTP/1.1\r\nHo');
    await vi.waitFor(() => expect(guard.open()).toBe(5));

    // 127.0.0.2 holds the most (4, then 3): its two oldest make room, the lone one stays.
    const newcomers = [await open(port, '127.0.0.3')];
    await vi.waitFor(() => expect(many[0]?.closed()).toBe(true));
    newcomers.push(await open(port, '127.0.0.3'));
    await vi.waitFor(() => expect(many[1]?.closed()).toBe(true));

    expect([lone, many[2], many[3], ...newcomers].map((connection) => connection?.closed())).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(guard.open()).toBe(5);
  });

  it('closes a newcomer only when every open connection has a request in progress', async () => {
    const { port, guard, held } = await startServer({ max: 2, idleMs: 60_000, checkIntervalMs: 1_000 });
    const busy = [await open(port, '127.0.0.1'), await open(port, '127.0.0.1')];
    for (const connection of busy) connection.socket.write('GET /hold HTTP/1.1\r\nHost: t\r\n\r\n');
    await vi.waitFor(() => expect(held).toHaveLength(2));

    const refused = await open(port, '127.0.0.2');
    await vi.waitFor(() => expect(refused.closed()).toBe(true));
    expect(busy.map((connection) => connection.closed())).toEqual([false, false]);

    // Answered, the connections wait again: the next newcomer takes the longest-waiting one's place.
    for (const response of held) response.end('done');
    await vi.waitFor(() => expect(busy.every((connection) => connection.answer().endsWith('done'))).toBe(true));
    const admitted = await open(port, '127.0.0.2');
    await vi.waitFor(() => expect(busy[0]?.closed()).toBe(true));
    expect(admitted.closed()).toBe(false);
    expect(guard.open()).toBe(2);
  });

  it('closes connections that wait past idleMs (silent, half-sent or kept alive), never one with a request in progress', async () => {
    const { port, guard, held } = await startServer({ max: 100, idleMs: 300, checkIntervalMs: 50 });
    const silent = await open(port, '127.0.0.1');
    const halfSent = await open(port, '127.0.0.1');
    halfSent.socket.write('GET / HTTP/1.1\r\nHo');
    const keptAlive = await open(port, '127.0.0.1');
    keptAlive.socket.write('GET / HTTP/1.1\r\nHost: t\r\n\r\n');
    const busy = await open(port, '127.0.0.1');
    busy.socket.write('GET /hold HTTP/1.1\r\nHost: t\r\n\r\n');

    await vi.waitFor(() =>
      expect([silent, halfSent, keptAlive].map((connection) => connection.closed())).toEqual([true, true, true]),
    );
    expect(keptAlive.answer()).toMatch(/^HTTP\/1\.1 200/);
    expect(busy.closed()).toBe(false);
    expect(guard.open()).toBe(1);

    // Answered, it waits like the others, and goes the same way.
    held[0]?.end('done');
    await vi.waitFor(() => expect(busy.closed()).toBe(true));
    expect(busy.answer()).toMatch(/done$/);
    expect(guard.open()).toBe(0);
  });
});
