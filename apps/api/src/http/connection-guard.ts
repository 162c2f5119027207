import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionGuardOptions {
  /** Open connections at most. */
  readonly max: number;
  /**
   * A connection without a request in progress (silent since it opened, its headers half-sent, or
   * idle between keep-alive requests) is closed once it has been so this long.
   */
  readonly idleMs: number;
  /** How often such connections are looked for. */
  readonly checkIntervalMs: number;
}

export interface ConnectionGuard {
  /** Connections open now. */
  open(): number;
}

/** One client address's connections: how many are open, and its waiting ones, longest-waiting first. */
interface AddressConnections {
  open: number;
  readonly waiting: Set<Socket>;
}

/**
 * Keeps a client from holding an HTTP server shut with connections that never finish a request.
 *
 * A connection is *busy* from a request's headers to the close of its response, and *waiting*
 * otherwise: before its first request is complete (silent or half-sent) and between keep-alive
 * requests. Waiting ones are closed after `idleMs` (Node's own timeouts leave a silent connection
 * open for ever and check the others every 30 s by default). At `max` open, a new connection makes
 * room by closing the longest-waiting connection of the client address that holds the most
 * connections: a client that floods the server evicts its own connections, never a probe's or
 * another client's that has fewer. Only when every open connection is busy is the new one closed.
 * Node's `maxConnections` instead refuses the newcomer, so whoever fills the cap first keeps it.
 */
export function guardConnections(
  server: Server,
  { max, idleMs, checkIntervalMs }: ConnectionGuardOptions,
): ConnectionGuard {
  /** Every open connection: its client's address (as it was on arrival) and its requests in flight. */
  const tracked = new Map<Socket, { readonly address: string; busy: number }>();
  /** Waiting connections and since when, longest-waiting first (a Map keeps insertion order). */
  const waitingSince = new Map<Socket, number>();
  const byAddress = new Map<string, AddressConnections>();

  function startWaiting(socket: Socket, address: string): void {
    waitingSince.delete(socket);
    waitingSince.set(socket, performance.now());
    const waiting = byAddress.get(address)?.waiting;
    waiting?.delete(socket);
    waiting?.add(socket);
  }

  function stopWaiting(socket: Socket, address: string): void {
    waitingSince.delete(socket);
    byAddress.get(address)?.waiting.delete(socket);
  }

  /** Drops a connection from the books (at once, not at its close event) and closes it. */
  function close(socket: Socket): void {
    const connection = tracked.get(socket);
    if (connection === undefined) return;
    tracked.delete(socket);
    stopWaiting(socket, connection.address);
    const connections = byAddress.get(connection.address);
    if (connections !== undefined && --connections.open === 0) byAddress.delete(connection.address);
    socket.destroy();
  }

  /**
   * The longest-waiting connection of the address holding the most connections (of two holding as
   * many, the one whose connection has waited longer), if any waits.
   */
  function evictionCandidate(): Socket | undefined {
    let chosen: { readonly open: number; readonly socket: Socket; readonly since: number } | undefined;
    for (const connections of byAddress.values()) {
      const socket: Socket | undefined = connections.waiting.values().next().value;
      if (socket === undefined || (chosen !== undefined && connections.open < chosen.open)) continue;
      const since = waitingSince.get(socket) ?? 0;
      if (chosen === undefined || connections.open > chosen.open || since < chosen.since) {
        chosen = { open: connections.open, socket, since };
      }
    }
    return chosen?.socket;
  }

  server.on('connection', (socket: Socket) => {
    if (tracked.size >= max) {
      const victim = evictionCandidate();
      if (victim === undefined) {
        socket.destroy();
        return;
      }
      close(victim);
    }
    const address = socket.remoteAddress ?? '';
    let connections = byAddress.get(address);
    if (connections === undefined) {
      connections = { open: 0, waiting: new Set() };
      byAddress.set(address, connections);
    }
    connections.open++;
    tracked.set(socket, { address, busy: 0 });
    startWaiting(socket, address);
    socket.once('close', () => close(socket));
  });

  server.on('request', (request, response) => {
    const { socket } = request;
    const connection = tracked.get(socket);
    if (connection === undefined) return;
    connection.busy++;
    stopWaiting(socket, connection.address);
    response.once('close', () => {
      // Gone already, or evicted and replaced: nothing to do.
      if (tracked.get(socket) !== connection) return;
      if (--connection.busy === 0) startWaiting(socket, connection.address);
    });
  });

  const sweep = setInterval(() => {
    const waitedTooLong = performance.now() - idleMs;
    for (const [socket, since] of waitingSince) {
      if (since > waitedTooLong) break;
      close(socket);
    }
  }, checkIntervalMs);
  sweep.unref();
  server.once('close', () => clearInterval(sweep));

  return { open: () => tracked.size };
}
