import type { RequestListener } from 'node:http';
import type { Socket } from 'node:net';

/** How long the process stays busy after fewer than `threshold` requests are left in flight. */
const DEFAULT_BUSY_HOLD_MS = 250;

/** The requests a server has in flight, and whether that many make the process busy. */
export interface RequestLoad {
  /**
   * The listener, counting each request from its arrival (its headers read) until its response
   * closes or its connection does, whichever comes first.
   */
  track(listener: RequestListener): RequestListener;
  /** Requests in flight now. */
  inFlight(): number;
  /**
   * Whether `threshold` or more are in flight, or were within the last `holdMs` (a burst's
   * moments between answers do not end it). Never with a threshold of 0.
   */
  busy(): boolean;
}

/**
 * Counts a server's requests in flight: what the webhook dispatcher asks before it sends, so that
 * deliveries give way to the requests while there are many (see the dispatcher's `busy`). Every
 * request counts, answered or not yet authenticated: a client holding requests open makes the
 * deliveries slower while it does, never stops them.
 */
export function createRequestLoad(threshold: number, holdMs = DEFAULT_BUSY_HOLD_MS): RequestLoad {
  let inFlight = 0;
  let busyUntil = Number.NEGATIVE_INFINITY;
  /** Per connection, the ends of its requests still in flight: run when it closes. */
  const openOn = new WeakMap<Socket, Set<() => void>>();
  const endsOn = (socket: Socket): Set<() => void> => {
    let ends = openOn.get(socket);
    if (ends === undefined) {
      const created = new Set<() => void>();
      ends = created;
      openOn.set(socket, created);
      socket.once('close', () => {
        for (const end of [...created]) end();
      });
    }
    return ends;
  };
  return {
    track(listener) {
      return (request, response) => {
        inFlight += 1;
        // Once, on the response's close or, should that never come (a response queued behind
        // others on a connection that died), the connection's.
        const ends = endsOn(request.socket);
        let open = true;
        const end = () => {
          if (!open) return;
          open = false;
          ends.delete(end);
          if (threshold > 0 && inFlight >= threshold) busyUntil = performance.now() + holdMs;
          inFlight -= 1;
        };
        ends.add(end);
        response.once('close', end);
        listener(request, response);
      };
    },
    inFlight: () => inFlight,
    busy: () => threshold > 0 && (inFlight >= threshold || performance.now() < busyUntil),
  };
}
