/**
 * Writes the next migration, as `prisma migrate dev --create-only NAME` would: replays
 * prisma/migrations on a throwaway in-memory PGlite (the shadow database), diffs the result
 * against prisma/schema.prisma with Prisma's schema engine, and writes
 * prisma/migrations/<UTC YYYYMMDDHHMMSS>_<name>/migration.sql, or prints "no changes".
 *
 * Usage (from packages/db): ./node_modules/.bin/tsx scripts/new-migration.ts NAME
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import {
  errorMessage,
  MIGRATION_LOCK_FILE,
  MIGRATION_SCRIPT_FILE,
  NO_SCHEMA_FILTER,
  POSTGRESQL_MIGRATION_LOCK,
  pgliteAdapterFactory,
  readMigrationsList,
  withSchemaEngine,
} from '../src/schema-engine.js';

const SCHEMA_PATH = fileURLToPath(new URL('../prisma/schema.prisma', import.meta.url));
const MIGRATIONS_DIR = fileURLToPath(new URL('../prisma/migrations', import.meta.url));

/** Prisma's CLI slugifies the name (`slugify(name, { separator: '_' })`, 200 chars at most). */
function migrationSlug(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/([a-z\d])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z\d]+)/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z\d]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 200);
}

/** The engine names migrations after the current UTC time, `YYYYMMDDHHMMSS`. */
function migrationTimestamp(now: Date): string {
  return now.toISOString().replace(/\D/g, '').slice(0, 14);
}

async function main(args: readonly string[]): Promise<void> {
  const [name, ...extra] = args;
  if (name === undefined || extra.length > 0) throw new Error('usage: new-migration.ts NAME');
  const slug = migrationSlug(name);
  if (slug === '') throw new Error(`the migration name ${JSON.stringify(name)} has no letters or digits`);

  const schema = await readFile(SCHEMA_PATH, 'utf8');
  await mkdir(MIGRATIONS_DIR, { recursive: true });
  const migrations = await readMigrationsList(MIGRATIONS_DIR);
  // The engine reads the provider from the lock file, which the first migration creates.
  const lockfile = { ...migrations.lockfile, content: migrations.lockfile.content ?? POSTGRESQL_MIGRATION_LOCK };

  // The engine insists on a main database even for a diff that only uses the shadow one.
  const main = await PGlite.create();
  const factory = pgliteAdapterFactory(main);
  let diff: { exitCode: number; stdout: string | null };
  try {
    diff = await withSchemaEngine(factory, `Diffing ${MIGRATIONS_DIR} against ${SCHEMA_PATH}`, (engine) =>
      engine.diff({
        from: { tag: 'migrations', ...migrations, lockfile },
        to: { tag: 'schemaDatamodel', files: [{ path: SCHEMA_PATH, content: schema }] },
        script: true,
        exitCode: true, // 0: no difference, 2: a difference (the script)
        filters: NO_SCHEMA_FILTER,
      }),
    );
  } finally {
    await factory.close();
    await main.close();
  }

  if (diff.exitCode === 0) {
    console.log('no changes');
    return;
  }
  if (diff.exitCode !== 2 || diff.stdout === null) {
    throw new Error(`unexpected diff result: exit code ${diff.exitCode}, script ${JSON.stringify(diff.stdout)}`);
  }

  const migrationName = `${migrationTimestamp(new Date())}_${slug}`;
  const last = migrations.migrationDirectories.at(-1)?.path;
  if (last !== undefined && migrationName.localeCompare(last) <= 0) {
    // Migrations apply in name order: a new one must sort after every existing one.
    throw new Error(`${migrationName} would sort before the existing migration ${last}; check the clock`);
  }
  const migrationDir = path.join(MIGRATIONS_DIR, migrationName);
  await mkdir(migrationDir); // fails if it exists
  await writeFile(path.join(migrationDir, MIGRATION_SCRIPT_FILE), diff.stdout, 'utf8');
  // Prisma rewrites the lock file with every migration it creates.
  await writeFile(path.join(MIGRATIONS_DIR, MIGRATION_LOCK_FILE), POSTGRESQL_MIGRATION_LOCK, 'utf8');
  console.log(`wrote ${path.relative(process.cwd(), path.join(migrationDir, MIGRATION_SCRIPT_FILE))}`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(errorMessage(error));
  process.exitCode = 1;
});
