import { createThrowawayDatabase, type ThrowawayDatabase, withServerClient } from '@plant-store/db/testing';

const HINT = 'set BENCH_DATABASE_URL, or run with --engines pglite';

/** A new, empty database `plant_store_bench_<random>` on the server at `serverUrl`. */
export function createBenchDatabase(serverUrl: string): Promise<ThrowawayDatabase> {
  return createThrowawayDatabase(serverUrl, { prefix: 'plant_store_bench', hint: HINT });
}

/** Fails early, with the variable to fix, when the server cannot be reached; else its version. */
export async function checkServer(serverUrl: string): Promise<string> {
  const result = await withServerClient(serverUrl, HINT, (client) =>
    client.query<{ server_version: string }>('SHOW server_version'),
  );
  return result.rows[0]?.server_version ?? 'unknown';
}
