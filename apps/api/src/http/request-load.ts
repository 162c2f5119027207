import type { RequestListener } from 'node:http';

/** How long the process stays busy after fewer than `threshold` requests are left in flight. */
const BUSY_HOLD_MS = 250;

/** The requests a server has in flight, and whether that many make the process busy. */
export interface RequestLoad {
  /** The listener, counting each request from its arrival until its response ends or its connection closes. */
  track(listener: RequestListener): RequestListener;
  /** Requests in flight now. */
  inFlight(): number;
  /**
   * Whether `threshold` or more are in flight, or were within the last 250 ms (a burst's moments
   * between answers do not end it). Never with a threshold of 0.
   */
  busy(): boolean;
}

/**
 * Counts a server's requests in flight: what the webhook dispatcher asks before it sends, so that
 * deliveries give way to the requests while there are many (see the dispatcher's `busy`).
 */
export function createRequestLoad(threshold: number): RequestLoad {
  let inFlight = 0;
  let busyUntil = Number.NEGATIVE_INFINITY;
  return {
    track(listener) {
      return (request, response) => {
        inFlight += 1;
        response.once('close', () => {
          if (threshold > 0 && inFlight >= threshold) busyUntil = performance.now() + BUSY_HOLD_MS;
          inFlight -= 1;
        });
        listener(request, response);
      };
    },
    inFlight: () => inFlight,
    busy: () => threshold > 0 && (inFlight >= threshold || performance.now() < busyUntil),
  };
}
