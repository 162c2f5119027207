import { DEFAULT_DATA_DIR, openDatabase } from '../database.js';

/**
 * `pnpm db:migrate`: applies pending migrations to DATABASE_URL, or to the embedded database in
 * DATA_DIR (default: the repository's .data folder), without starting the service.
 */
const url = process.env.DATABASE_URL || undefined;
const dataDir = process.env.DATA_DIR || DEFAULT_DATA_DIR;
const db = await openDatabase({ url, dataDir, poolSize: 1, lockWaitMs: 0 });
try {
  const applied = db.appliedMigrations;
  process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
} finally {
  await db.close();
}
