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
