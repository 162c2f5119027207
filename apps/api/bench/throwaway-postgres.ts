import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface ThrowawayDatabase {
  readonly name: string;
  readonly url: string;
  /** Drops it, closing whatever connections are left. */
  drop(): Promise<void>;
}

/** A new, empty database `plant_store_bench_<random>` on the server at `serverUrl`. */
export async function createThrowawayDatabase(serverUrl: string): Promise<ThrowawayDatabase> {
  const name = `plant_store_bench_${randomBytes(6).toString('hex')}`;
  await withServer(serverUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      await withServer(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/** Fails early, with the variable to fix, when the server cannot be reached. */
export async function checkServer(serverUrl: string): Promise<string> {
  const result = await withServer(serverUrl, (client) =>
    client.query<{ server_version: string }>('SHOW server_version'),
  );
  return result.rows[0]?.server_version ?? 'unknown';
}

async function withServer<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`cannot reach PostgreSQL at ${url} (set BENCH_DATABASE_URL or --engines pglite): ${String(error)}`);
  }
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
