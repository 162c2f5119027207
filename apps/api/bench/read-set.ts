import { plantJson, READ_SET_SIZE, readSetPlant } from './bench-plants.js';
import { measureHttp } from './http-load.js';
import type { Measurement } from './measurement.js';

/** Answers with status 200 in a measurement. */
export function count200(measurement: Measurement): number {
  return measurement.statusCodes['200'] ?? 0;
}

/** Creates the read set through the service (10,000 creates, 64 at a time); every one must be a 200. */
export async function createReadSet(url: string, token: string): Promise<number> {
  let index = 0;
  const measurement = await measureHttp(
    {
      url,
      token,
      nextRequest: () => ({ method: 'POST', path: '/plants', body: plantJson(readSetPlant(index++)) }),
      expectedStatus: 200,
    },
    64,
    { amount: READ_SET_SIZE },
  );
  if (measurement.unexpected > 0 || measurement.errors > 0 || measurement.completed < READ_SET_SIZE) {
    throw new Error(
      `creating the read set: ${measurement.completed} answered, statuses ${JSON.stringify(measurement.statusCodes)}, ${measurement.errors} errors`,
    );
  }
  return count200(measurement);
}

/**
 * Up to `samples` places spread over the event feed (every `stride`th event's cursor), read page
 * by page from its start: where the `feed` scenario's pages begin.
 */
export async function sampleFeedCursors(url: string, token: string, samples = 1_000, stride = 10): Promise<string[]> {
  const cursors: string[] = [];
  let after: string | undefined;
  for (let seen = 0; cursors.length < samples; ) {
    const response = await fetch(`${url}/events?limit=1000${after === undefined ? '' : `&after=${after}`}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    if (response.status !== 200) throw new Error(`sampling the feed: GET /events answered ${response.status}`);
    // Only the cursors (strings) are read: the ids, parsed as doubles here, are not used.
    const page = (await response.json()) as Array<{ readonly cursor: string }>;
    for (const { cursor } of page) if (seen++ % stride === 0) cursors.push(cursor);
    const last = page.at(-1);
    if (last === undefined || page.length < 1000) break;
    after = last.cursor;
  }
  return cursors;
}
