import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseJson } from '@plant-store/schema';

/** What a receiver has counted so far. */
export interface ReceiverCounts {
  /** POSTs received, repeats included. */
  readonly posts: number;
  /** POSTs of a plant id this receiver had already received. */
  readonly duplicates: number;
  /** POSTs whose body had no integer `id`: none are expected. */
  readonly unreadable: number;
  /** performance.now() of the first and the last POST; null before the first. */
  readonly firstAt: number | null;
  readonly lastAt: number | null;
}

export interface BenchReceiver {
  /** `http://127.0.0.1:<port>/hook` */
  readonly url: string;
  /** When each plant id first arrived (performance.now(), the bench's own clock). */
  readonly firstArrivals: ReadonlyMap<bigint, number>;
  counts(): ReceiverCounts;
  /** Resolves once every id has arrived, with 0, or after `timeoutMs` with how many have not. */
  waitForAll(ids: readonly bigint[], timeoutMs: number): Promise<number>;
  close(): Promise<void>;
}

/** How often waitForAll looks: the arrival times are taken in the handler, so this only ends the wait. */
const WAIT_POLL_MS = 25;

/**
 * A receiver that answers 204 as soon as a request's body has arrived and only then reads it,
 * so the time it records is when the dispatcher's POST got here, not when a slow receiver
 * finished. Runs in the bench process: its clock is the one the creates are timed with.
 */
export async function startReceiver(): Promise<BenchReceiver> {
  const firstArrivals = new Map<bigint, number>();
  let counts: ReceiverCounts = { posts: 0, duplicates: 0, unreadable: 0, firstAt: null, lastAt: null };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const at = performance.now();
      response.writeHead(204).end();
      const id = plantIdOf(Buffer.concat(chunks).toString('utf8'));
      const repeated = id !== undefined && firstArrivals.has(id);
      if (id !== undefined && !repeated) firstArrivals.set(id, at);
      counts = {
        posts: counts.posts + 1,
        duplicates: counts.duplicates + (repeated ? 1 : 0),
        unreadable: counts.unreadable + (id === undefined ? 1 : 0),
        firstAt: counts.firstAt ?? at,
        lastAt: at,
      };
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/hook`,
    firstArrivals,
    counts: () => counts,
    async waitForAll(ids, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const missing = ids.filter((id) => !firstArrivals.has(id)).length;
        if (missing === 0 || Date.now() >= deadline) return missing;
        await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
      }
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The `id` of a NewPlant body, read exactly: one bench id in 16 lies above 2^53. */
function plantIdOf(body: string): bigint | undefined {
  let value: unknown;
  try {
    value = parseJson(body);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || !('id' in value)) return undefined;
  return typeof value.id === 'bigint' ? value.id : undefined;
}
