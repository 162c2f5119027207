import { createHash, randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyMigrations, type MigrationTarget } from './migrate.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('../prisma/migrations', import.meta.url));
// PGlite boots in 3-6 s; a shadow-free migrate is fast, but the first one compiles the engine.
const TIMEOUT = 120_000;

/** Runs SQL on whichever database a test migrated. */
type Query = <T>(sql: string) => Promise<T[]>;

const onPGlite =
  (db: PGlite): Query =>
  async <T>(sql: string) =>
    (await db.query<T>(sql)).rows;

const onPostgres =
  (connectionString: string): Query =>
  async <T>(sql: string) => {
    const client = new pg.Client({ connectionString });
    await client.connect();
    try {
      return (await client.query(sql)).rows as T[];
    } finally {
      await client.end();
    }
  };

interface CommittedMigration {
  readonly name: string;
  /** Prisma's checksum: SHA-256 of the migration.sql bytes, hex. */
  readonly checksum: string;
}

async function committedMigrations(): Promise<CommittedMigration[]> {
  const entries = await readdir(MIGRATIONS_DIR, { withFileTypes: true });
  const names = entries.filter((e) => e.isDirectory()).map((e) => e.name);
  names.sort();
  return Promise.all(
    names.map(async (name) => ({
      name,
      checksum: createHash('sha256')
        .update(await readFile(path.join(MIGRATIONS_DIR, name, 'migration.sql')))
        .digest('hex'),
    })),
  );
}

const tempDirs: string[] = [];

/** A copy of the committed migrations plus `extra` ones, optionally with another lock file. */
async function migrationsDirWith(extra: Record<string, string>, lockFile?: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'plant-store-migrations-'));
  tempDirs.push(dir);
  await cp(MIGRATIONS_DIR, dir, { recursive: true });
  for (const [name, sql] of Object.entries(extra)) {
    await mkdir(path.join(dir, name));
    await writeFile(path.join(dir, name, 'migration.sql'), sql);
  }
  if (lockFile !== undefined) await writeFile(path.join(dir, 'migration_lock.toml'), lockFile);
  return dir;
}

afterAll(async () => {
  await Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** Checks the schema and `_prisma_migrations` after every committed migration was applied. */
async function expectFullyMigrated(query: Query): Promise<void> {
  const tables = await query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`,
  );
  expect(tables.map((t) => t.table_name)).toEqual(
    expect.arrayContaining(['_prisma_migrations', 'api_tokens', 'plants']),
  );

  const rows = await query<{
    migration_name: string;
    checksum: string;
    finished_at: Date | null;
    rolled_back_at: Date | null;
    applied_steps_count: number;
  }>(
    `SELECT migration_name, checksum, finished_at, rolled_back_at, applied_steps_count
       FROM _prisma_migrations ORDER BY migration_name`,
  );
  const committed = await committedMigrations();
  expect(rows.map((r) => ({ name: r.migration_name, checksum: r.checksum }))).toEqual(committed);
  for (const row of rows) {
    expect(row.finished_at).toBeInstanceOf(Date);
    expect(row.rolled_back_at).toBeNull();
    expect(row.applied_steps_count).toBe(1);
  }
}

async function advisoryLocks(query: Query): Promise<number> {
  const [row] = await query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory'`);
  return row?.n ?? -1;
}

/** The name of the committed migrations, in order. */
async function committedNames(): Promise<string[]> {
  return (await committedMigrations()).map((m) => m.name);
}

it('has committed migrations in Prisma layout', async () => {
  const names = await committedNames();
  expect(names.length).toBeGreaterThan(0);
  for (const name of names) expect(name).toMatch(/^\d{14}_[a-z0-9_]+$/);
  expect(await readFile(path.join(MIGRATIONS_DIR, 'migration_lock.toml'), 'utf8')).toContain('provider = "postgresql"');
});

describe('applyMigrations on PGlite', { timeout: TIMEOUT }, () => {
  let db: PGlite;
  beforeAll(async () => {
    db = await PGlite.create();
  }, TIMEOUT);
  afterAll(async () => {
    await db.close();
  });

  it('applies every committed migration to a fresh in-memory database', async () => {
    const target: MigrationTarget = { kind: 'pglite', client: db };
    expect(await applyMigrations(target)).toEqual({ applied: await committedNames() });
    await expectFullyMigrated(onPGlite(db));
  });

  it('applies nothing on a second run', async () => {
    const before = await db.query(`SELECT * FROM _prisma_migrations ORDER BY migration_name`);
    expect(await applyMigrations({ kind: 'pglite', client: db })).toEqual({ applied: [] });
    expect((await db.query(`SELECT * FROM _prisma_migrations ORDER BY migration_name`)).rows).toEqual(before.rows);
  });

  it("leaves the caller's client open, usable and holding no advisory lock", async () => {
    expect(db.closed).toBe(false);
    expect(await advisoryLocks(onPGlite(db))).toBe(0);
    await db.query(`INSERT INTO plants (id, name) VALUES (1, 'fern')`);
    expect((await db.query<{ name: string }>(`SELECT name FROM plants`)).rows).toEqual([{ name: 'fern' }]);
  });

  it('fails on a provider mismatch in migration_lock.toml', async () => {
    const dir = await migrationsDirWith({}, 'provider = "sqlite"\n');
    await expect(applyMigrations({ kind: 'pglite', client: db }, { migrationsDir: dir })).rejects.toThrow(
      /Applying the migrations in .* to PGlite .* failed: \[P3019\].*sqlite/s,
    );
  });

  it('runs concurrent calls on one client one after the other', async () => {
    const fresh = await PGlite.create();
    try {
      const results = await Promise.all([1, 2, 3].map(() => applyMigrations({ kind: 'pglite', client: fresh })));
      expect(results.map((r) => r.applied).sort()).toEqual([[], [], await committedNames()]);
      await expectFullyMigrated(onPGlite(fresh));

      // A failing migration names itself and the database error, and is rolled back whole.
      const dir = await migrationsDirWith({
        '29990101000000_broken': 'CREATE TABLE "half_done" (id INT);\nCREATE TABLE "plants" (id INT);\n',
      });
      await expect(applyMigrations({ kind: 'pglite', client: fresh }, { migrationsDir: dir })).rejects.toThrow(
        /failed: migration 29990101000000_broken: .*relation "plants" already exists/s,
      );
      const halfDone = await fresh.query(`SELECT 1 FROM information_schema.tables WHERE table_name = 'half_done'`);
      expect(halfDone.rows).toEqual([]);
    } finally {
      await fresh.close();
    }
  });

  it('migrates a file-backed database once across close and reopen', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'plant-store-pglite-'));
    tempDirs.push(dataDir);
    const first = await PGlite.create(dataDir);
    try {
      expect(await applyMigrations({ kind: 'pglite', client: first })).toEqual({ applied: await committedNames() });
    } finally {
      await first.close();
    }
    const reopened = await PGlite.create(dataDir);
    try {
      expect(await applyMigrations({ kind: 'pglite', client: reopened })).toEqual({ applied: [] });
      await expectFullyMigrated(onPGlite(reopened));
    } finally {
      await reopened.close();
    }
  });
});

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

// Registered only when TEST_DATABASE_URL is set (CI always sets it). Databases are created inside
// each test, so an unreachable server fails the tests instead of skipping them.
if (TEST_DATABASE_URL) {
  describe('applyMigrations on PostgreSQL', { timeout: TIMEOUT }, () => {
    const created: string[] = [];

    /** Creates a throwaway database on the TEST_DATABASE_URL server and returns its URL. */
    async function freshDatabase(): Promise<string> {
      const name = `plant_store_migrate_${randomBytes(6).toString('hex')}`;
      await onPostgres(TEST_DATABASE_URL ?? '')(`CREATE DATABASE ${name}`);
      created.push(name);
      const url = new URL(TEST_DATABASE_URL ?? '');
      url.pathname = `/${name}`;
      return url.toString();
    }

    afterAll(async () => {
      for (const name of created.splice(0)) {
        await onPostgres(TEST_DATABASE_URL ?? '')(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }
    });

    it('applies every committed migration to a fresh database, then nothing', async () => {
      const url = await freshDatabase();
      const target: MigrationTarget = { kind: 'postgres', connectionString: url };
      expect(await applyMigrations(target)).toEqual({ applied: await committedNames() });
      await expectFullyMigrated(onPostgres(url));
      expect(await applyMigrations(target)).toEqual({ applied: [] });
      await expectFullyMigrated(onPostgres(url));

      // Its session is closed, and with it every lock it took.
      const query = onPostgres(url);
      expect(await advisoryLocks(query)).toBe(0);
      const sessions = await query(
        `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      expect(sessions).toEqual([]);
    });

    it('lets 4 replicas migrate one database at once, applying each migration once', async () => {
      const url = await freshDatabase();
      const results = await Promise.all(
        [1, 2, 3, 4].map(() => applyMigrations({ kind: 'postgres', connectionString: url })),
      );
      expect(results.map((r) => r.applied).sort()).toEqual([[], [], [], await committedNames()]);
      await expectFullyMigrated(onPostgres(url));
    });

    it('reports a failing migration with its name and the database error, and rolls it back whole', async () => {
      const url = await freshDatabase();
      const dir = await migrationsDirWith({
        // A `;` inside a string: the script must reach the server whole, not split on `;`.
        '29990101000000_broken': `CREATE TABLE "half_done" (note TEXT DEFAULT 'a;b');\nCREATE TABLE "plants" (id INT);\n`,
      });
      await expect(
        applyMigrations({ kind: 'postgres', connectionString: url }, { migrationsDir: dir }),
      ).rejects.toThrow(
        /to PostgreSQL database "plant_store_migrate_\w+" on .* failed: migration 29990101000000_broken: .*relation "plants" already exists/s,
      );
      expect(await onPostgres(url)(`SELECT 1 FROM information_schema.tables WHERE table_name = 'half_done'`)).toEqual(
        [],
      );
    });

    it('fails clearly when the server cannot be reached', async () => {
      await expect(
        applyMigrations({ kind: 'postgres', connectionString: 'postgres://postgres@127.0.0.1:1/nowhere' }),
      ).rejects.toThrow(/could not connect and take the migration lock: .*ECONNREFUSED/);
    });
  });
}
