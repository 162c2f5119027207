import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { applyMigrations } from '../migrate.js';
import type { TestStorage } from '../testing.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations', import.meta.url));

/**
 * Puts `storage` where a previous version left it: every committed migration before `migration`
 * applied, then `rows` (SQL) written as that version wrote them. Opening it afterwards applies
 * `migration` and the rest: the upgrade under test. Throws when `migration` is not committed.
 */
export async function storageOfPreviousVersion(storage: TestStorage, migration: string, rows: string): Promise<void> {
  const migrationsDir = await mkdtemp(join(tmpdir(), 'plant-store-migrations-'));
  try {
    await cp(MIGRATIONS_DIR, migrationsDir, { recursive: true });
    const names = (await readdir(migrationsDir, { withFileTypes: true })).filter((entry) => entry.isDirectory());
    if (!names.some((entry) => entry.name === migration)) throw new Error(`no committed migration ${migration}`);
    for (const entry of names) {
      if (entry.name >= migration) await rm(join(migrationsDir, entry.name), { recursive: true });
    }
    if (storage.engine === 'pglite') {
      const pglite = await PGlite.create(join(storage.dataDir, 'pgdata'));
      try {
        await applyMigrations({ kind: 'pglite', client: pglite }, { migrationsDir });
        await pglite.exec(rows);
      } finally {
        await pglite.close();
      }
      return;
    }
    const url = storage.databaseUrl ?? '';
    await applyMigrations({ kind: 'postgres', connectionString: url }, { migrationsDir });
    const previous = new pg.Client({ connectionString: url });
    await previous.connect();
    try {
      await previous.query(rows);
    } finally {
      await previous.end();
    }
  } finally {
    await rm(migrationsDir, { recursive: true, force: true });
  }
}
