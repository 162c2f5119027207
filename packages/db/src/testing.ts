/** Test storage for database-facing suites, here and in apps that build on this package. */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export type TestEngine = 'pglite' | 'postgres';

/**
 * The engines every database-facing suite runs on: the embedded PGlite always, PostgreSQL when
 * TEST_DATABASE_URL is set (CI always sets it; an unreachable server then fails the suite).
 */
export function testEngines(): TestEngine[] {
  return process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
}

/** A fresh, empty place to keep data: a temp folder for PGlite, a new database for PostgreSQL. */
export interface TestStorage {
  readonly engine: TestEngine;
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  dispose(): Promise<void>;
}

export async function createTestStorage(engine: TestEngine): Promise<TestStorage> {
  const dataDir = await mkdtemp(join(tmpdir(), 'plant-store-test-'));
  if (engine === 'pglite') {
    return { engine, dataDir, databaseUrl: undefined, dispose: () => rm(dataDir, { recursive: true, force: true }) };
  }
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) throw new Error('TEST_DATABASE_URL is required for the PostgreSQL suite');
  const database = await createThrowawayDatabase(serverUrl, { prefix: 'plant_store_test', hint: 'TEST_DATABASE_URL' });
  return {
    engine,
    dataDir,
    databaseUrl: database.url,
    async dispose() {
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface ThrowawayDatabase {
  readonly name: string;
  readonly url: string;
  /** Drops it, closing whatever connections are left. */
  drop(): Promise<void>;
}

export interface ThrowawayDatabaseOptions {
  /** The name is `<prefix>_<12 hex digits>`. */
  readonly prefix: string;
  /** Says where the server URL came from, in the message when it cannot be reached. */
  readonly hint: string;
}

/** A new, empty database on the PostgreSQL server at `serverUrl` (tests, the bench). */
export async function createThrowawayDatabase(
  serverUrl: string,
  { prefix, hint }: ThrowawayDatabaseOptions,
): Promise<ThrowawayDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await withServerClient(serverUrl, hint, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      await withServerClient(serverUrl, hint, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/** Runs `work` on a fresh connection to the server; fails naming `hint` when it cannot connect. */
export async function withServerClient<T>(
  url: string,
  hint: string,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`cannot reach the PostgreSQL server at ${url} (${hint}): ${String(error)}`);
  }
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
