/**
 * `prisma migrate deploy` without the Prisma CLI: applies the committed migrations through
 * Prisma's schema engine (WASM), which keeps `_prisma_migrations` exactly as the CLI would.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import { describeHost, parsePostgresUrl } from './postgres/connection-url.js';
import { createPostgresPool } from './postgres/postgres-pool.js';
import {
  errorMessage,
  type MigrationList,
  NO_SCHEMA_FILTER,
  PRISMA_MIGRATE_ADVISORY_LOCK_KEY,
  pgliteAdapterFactory,
  postgresAdapterFactory,
  readMigrationsList,
  type SchemaEngine,
  withSchemaEngine,
} from './schema-engine.js';

export type MigrationTarget =
  /** An already-open PGlite: its data dir may be opened by one process only. It is left open. */
  | { readonly kind: 'pglite'; readonly client: PGlite }
  | { readonly kind: 'postgres'; readonly connectionString: string };

export interface MigrationResult {
  /** Names of the migrations applied by this call, oldest first; empty when already up to date. */
  readonly applied: readonly string[];
}

export interface ApplyMigrationsOptions {
  /** Defaults to this package's `prisma/migrations`. */
  readonly migrationsDir?: string;
}

// `../prisma/migrations` from both `src/` and the compiled `dist/`.
const DEFAULT_MIGRATIONS_DIR = fileURLToPath(new URL('../prisma/migrations', import.meta.url));

// How long a replica waits for another one that is applying migrations. The engine's own wait
// gives up after 10 s, too short for a migration that rewrites a large table.
const LOCK_WAIT_TIMEOUT = '10min';

/**
 * Applies the migrations not yet recorded in the target's `_prisma_migrations`, as
 * `prisma migrate deploy` does. Safe to call from several processes at once against one
 * PostgreSQL database, and from several callers at once on one PGlite client.
 */
export async function applyMigrations(
  target: MigrationTarget,
  options: ApplyMigrationsOptions = {},
): Promise<MigrationResult> {
  const migrationsDir = path.resolve(options.migrationsDir ?? DEFAULT_MIGRATIONS_DIR);
  const action = `Applying the migrations in ${migrationsDir} to ${describeTarget(target)}`;
  let migrations: MigrationList;
  try {
    migrations = await readMigrationsList(migrationsDir);
  } catch (error) {
    throw new Error(`${action} failed: ${errorMessage(error)}`, { cause: error });
  }
  const applied =
    target.kind === 'pglite'
      ? await applyToPGlite(target.client, migrations, action)
      : await applyToPostgres(target.connectionString, migrations, action);
  return { applied };
}

async function applyToPostgres(connectionString: string, migrations: MigrationList, action: string) {
  // One session for everything: the advisory lock is per session, and the engine's statements
  // must run where the lock is held.
  // A connect timeout, so that a start against a database that does not answer fails instead of
  // hanging; no query timeout, because waiting for the migration lock may rightly take long.
  const pool = createPostgresPool(connectionString, {
    max: 1,
    idleTimeoutMillis: 0,
    connectionTimeoutMillis: 5_000,
    application_name: 'plant-store-migrate',
  });
  // Without a listener, a server dropping the idle session would crash the process; the next
  // query reports the failure instead.
  pool.on('error', () => {});
  try {
    await lockMigrations(pool, action);
    if (await isUpToDate((sql) => pool.query(sql), migrations)) return [];
    // The engine takes the same lock again on this session (locks are re-entrant): immediate.
    return await withSchemaEngine(postgresAdapterFactory(pool), action, (engine) => deploy(engine, migrations));
  } finally {
    // Ending the session releases its advisory locks, ours and the engine's.
    await pool.end();
  }
}

/**
 * Waits for Prisma's migrate lock, so that replicas starting together apply each migration once
 * and wait for each other instead of failing after the engine's 10 s lock timeout.
 */
async function lockMigrations(pool: pg.Pool, action: string): Promise<void> {
  try {
    await pool.query(
      `SET lock_timeout = '${LOCK_WAIT_TIMEOUT}'; SELECT pg_advisory_lock(${PRISMA_MIGRATE_ADVISORY_LOCK_KEY}); RESET lock_timeout`,
    );
  } catch (error) {
    const reason =
      error instanceof Error && 'code' in error && error.code === '55P03'
        ? `timed out after ${LOCK_WAIT_TIMEOUT} waiting for pg_advisory_lock(${PRISMA_MIGRATE_ADVISORY_LOCK_KEY}), held by another process applying migrations`
        : `could not connect and take the migration lock: ${errorMessage(error)}`;
    throw new Error(`${action} failed: ${reason}`, { cause: error });
  }
}

// Per PGlite client: its single session cannot exclude itself with an advisory lock.
const pgliteQueues = new WeakMap<PGlite, Promise<unknown>>();

async function applyToPGlite(client: PGlite, migrations: MigrationList, action: string) {
  const previous = pgliteQueues.get(client) ?? Promise.resolve();
  const run = previous.then(() => applyToPGliteNow(client, migrations, action));
  pgliteQueues.set(
    client,
    run.catch(() => {}),
  );
  return run;
}

async function applyToPGliteNow(client: PGlite, migrations: MigrationList, action: string) {
  if (client.closed) throw new Error(`${action} failed: the PGlite client is closed`);
  if (await isUpToDate((sql) => client.query(sql), migrations)) return [];
  let engineLocks = 0;
  const lockStatement = `pg_advisory_lock(${PRISMA_MIGRATE_ADVISORY_LOCK_KEY})`;
  const factory = pgliteAdapterFactory(client, {
    onExecuteRaw: (sql) => {
      if (sql.includes(lockStatement)) engineLocks++;
    },
  });
  try {
    return await withSchemaEngine(factory, action, (engine) => deploy(engine, migrations));
  } finally {
    // The engine locks the session it is given and never unlocks (it expects to own it);
    // this one is the caller's, which stays open.
    for (; engineLocks > 0 && !client.closed; engineLocks--) {
      await client.query(`SELECT pg_advisory_unlock(${PRISMA_MIGRATE_ADVISORY_LOCK_KEY})`);
    }
    await factory.close();
  }
}

const POSTGRESQL_PROVIDER = /^\s*provider\s*=\s*"postgresql"\s*$/m;

interface RecordedMigration {
  readonly migration_name: string;
  readonly finished: boolean;
  readonly rolled_back: boolean;
}

/**
 * The committed migrations `_prisma_migrations` does not record as applied, oldest first; empty
 * when the database is up to date. A failed migration, a lock file naming another provider or an
 * unreadable migration file also counts as "not up to date": the schema engine reports those.
 */
async function pendingIn(
  query: (sql: string) => Promise<{ rows: unknown[] }>,
  migrations: MigrationList,
): Promise<string[]> {
  const all = migrations.migrationDirectories.map((directory) => directory.path);
  const [table] = (await query(`SELECT to_regclass('_prisma_migrations') IS NOT NULL AS present`)).rows as {
    present: boolean;
  }[];
  if (!table?.present) return all;
  // A lock file naming another provider is an error the engine reports (P3019).
  if (migrations.lockfile.content !== null && !POSTGRESQL_PROVIDER.test(migrations.lockfile.content)) return all;
  const recorded = (
    await query(
      'SELECT migration_name, finished_at IS NOT NULL AS finished, rolled_back_at IS NOT NULL AS rolled_back FROM _prisma_migrations',
    )
  ).rows as RecordedMigration[];
  const failed = recorded.filter((row) => !row.finished && !row.rolled_back).map((row) => row.migration_name);
  const applied = new Set(recorded.filter((row) => row.finished && !row.rolled_back).map((row) => row.migration_name));
  const pending = migrations.migrationDirectories
    .filter((directory) => directory.migrationFile.content.tag !== 'ok' || !applied.has(directory.path))
    .map((directory) => directory.path);
  return [...new Set([...failed, ...pending])];
}

/**
 * Whether `_prisma_migrations` records every migration as applied and none as failed: then
 * the schema engine would do nothing, and is not even loaded (its WASM costs about 100 MB of
 * memory at every start). Anything else (a new database, a pending or failed migration, an
 * unreadable migration file) goes through the engine, which applies or reports it.
 */
async function isUpToDate(
  query: (sql: string) => Promise<{ rows: unknown[] }>,
  migrations: MigrationList,
): Promise<boolean> {
  return (await pendingIn(query, migrations)).length === 0;
}

/**
 * The committed migrations the target has not applied (or has failed), oldest first: empty when
 * it is up to date. Reads `_prisma_migrations` only; applies nothing and takes no lock.
 */
export async function pendingMigrations(
  target: MigrationTarget,
  options: ApplyMigrationsOptions = {},
): Promise<readonly string[]> {
  const migrationsDir = path.resolve(options.migrationsDir ?? DEFAULT_MIGRATIONS_DIR);
  const action = `Checking the migrations in ${migrationsDir} against ${describeTarget(target)}`;
  try {
    const migrations = await readMigrationsList(migrationsDir);
    if (target.kind === 'pglite') return await pendingIn((sql) => target.client.query(sql), migrations);
    // A pool of one: with several hosts, the connection goes to the one that qualifies.
    const pool = createPostgresPool(target.connectionString, { max: 1, connectionTimeoutMillis: 5_000 });
    pool.on('error', () => {});
    try {
      return await pendingIn((sql) => pool.query(sql), migrations);
    } finally {
      await pool.end();
    }
  } catch (error) {
    throw new Error(`${action} failed: ${errorMessage(error)}`, { cause: error });
  }
}

async function deploy(engine: SchemaEngine, migrationsList: MigrationList): Promise<readonly string[]> {
  const { appliedMigrationNames } = await engine.applyMigrations({ migrationsList, filters: NO_SCHEMA_FILTER });
  return appliedMigrationNames;
}

/** Names the database in error messages without leaking a password. */
function describeTarget(target: MigrationTarget): string {
  if (target.kind === 'pglite') return `PGlite (${target.client.dataDir ?? 'in memory'})`;
  try {
    const { client, hosts } = parsePostgresUrl(target.connectionString);
    return `PostgreSQL database "${client.database ?? ''}" on ${hosts.map(describeHost).join(', ')}`;
  } catch {
    return 'PostgreSQL';
  }
}
