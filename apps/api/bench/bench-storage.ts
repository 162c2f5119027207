import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Cleanups } from './entry-point.js';
import type { Engine } from './options.js';
import { createBenchDatabase } from './throwaway-postgres.js';

export interface BenchStorage {
  /** What the service is started with: DATA_DIR, and DATABASE_URL on PostgreSQL. */
  readonly env: Record<string, string>;
  readonly url: string | undefined;
  readonly dataDir: string;
  readonly dispose: () => Promise<void>;
}

/**
 * A throwaway PostgreSQL database on `serverUrl`, or a temp folder for PGlite: both removed by
 * dispose(), or by `cleanups` if the bench stops first.
 */
export async function createBenchStorage(
  serverUrl: string,
  engine: Engine,
  { cleanups, progress, label }: { cleanups: Cleanups; progress: (text: string) => void; label: string },
): Promise<BenchStorage> {
  const dataDir = await mkdtemp(join(tmpdir(), `plant-store-${label}-${engine}-`));
  const removeDir = cleanups.add(`delete ${dataDir}`, () => rm(dataDir, { recursive: true, force: true }));
  if (engine === 'pglite') return { env: { DATA_DIR: dataDir }, url: undefined, dataDir, dispose: removeDir };
  const database = await createBenchDatabase(serverUrl);
  progress(`postgres: created database ${database.name}`);
  const drop = cleanups.add(`drop database ${database.name}`, () => database.drop());
  return {
    env: { DATABASE_URL: database.url, DATA_DIR: dataDir },
    url: database.url,
    dataDir,
    dispose: async () => {
      await drop();
      await removeDir();
    },
  };
}

/** The storage's size on disk: PostgreSQL's `pg_database_size`, or the embedded database's folder (stopped). */
export async function databaseBytes(storage: BenchStorage): Promise<number> {
  if (storage.url !== undefined) {
    const client = new pg.Client({ connectionString: storage.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ size: string }>(
        'SELECT pg_database_size(current_database())::text AS size',
      );
      return Number(rows[0]?.size ?? 0);
    } finally {
      await client.end();
    }
  }
  let total = 0;
  for (const entry of await readdir(storage.dataDir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}
