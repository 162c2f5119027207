/** Test storage for database-facing suites, here and in apps that build on this package. */
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type AuditActor, commandLineActor } from './audit/audit-records.js';
import { migrateDatabase } from './database.js';
import type { IssueTokenOptions } from './tokens/issue-token.js';
import { type NewWebhookInput, WEBHOOK_LIMIT } from './webhooks/create-webhook.js';

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

export interface TestStorageOptions {
  /**
   * Every migration already applied: a copy of a template migrated once (a folder copy for
   * PGlite, `CREATE DATABASE ... TEMPLATE` for PostgreSQL), seconds faster than migrating each
   * one. Default false: empty, for the tests of migrating and of first starts.
   */
  readonly migrated?: boolean;
}

export async function createTestStorage(engine: TestEngine, options: TestStorageOptions = {}): Promise<TestStorage> {
  const dataDir = await mkdtemp(join(tmpdir(), 'plant-store-test-'));
  if (engine === 'pglite') {
    if (options.migrated) await cp(await migratedTemplates().pglite(), dataDir, { recursive: true });
    return { engine, dataDir, databaseUrl: undefined, dispose: () => rm(dataDir, { recursive: true, force: true }) };
  }
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) throw new Error('TEST_DATABASE_URL is required for the PostgreSQL suite');
  const template = options.migrated ? await migratedTemplates().postgres(serverUrl) : undefined;
  const database = await createThrowawayDatabase(serverUrl, {
    prefix: 'plant_store_test',
    hint: 'TEST_DATABASE_URL',
    ...(template === undefined ? {} : { template }),
  });
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

/** Where a global setup (`createMigratedTemplates`) left the templates for every test file. */
const PGLITE_TEMPLATE_ENV = 'PLANT_STORE_TEST_PGLITE_TEMPLATE';
const POSTGRES_TEMPLATE_ENV = 'PLANT_STORE_TEST_POSTGRES_TEMPLATE';

export interface MigratedTemplates {
  /** A migrated PGlite data folder to copy. */
  pglite(): Promise<string>;
  /** The name of a migrated database on the server to clone. */
  postgres(serverUrl: string): Promise<string>;
  /** Removes what was made. */
  dispose(): Promise<void>;
}

/** Makes each template on first use, once. */
export function createMigratedTemplates(): MigratedTemplates {
  let folder: Promise<string> | undefined;
  let database: Promise<ThrowawayDatabase> | undefined;
  return {
    pglite() {
      folder ??= (async () => {
        const dataDir = await mkdtemp(join(tmpdir(), 'plant-store-template-'));
        await migrateDatabase({ dataDir });
        return dataDir;
      })();
      return folder;
    },
    async postgres(serverUrl) {
      database ??= (async () => {
        const created = await createThrowawayDatabase(serverUrl, {
          prefix: 'plant_store_template',
          hint: 'TEST_DATABASE_URL',
        });
        await migrateDatabase({ url: created.url, dataDir: '' });
        return created;
      })();
      return (await database).name;
    },
    async dispose() {
      const [dataDir, created] = await Promise.all([folder, database]);
      if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
      await created?.drop();
    },
  };
}

/**
 * Makes both templates now and names them in the environment, so that every test file (vitest
 * starts them after its global setup) copies the same ones. For a vitest `globalSetup`.
 */
export async function provideMigratedTemplates(): Promise<() => Promise<void>> {
  const templates = createMigratedTemplates();
  process.env[PGLITE_TEMPLATE_ENV] = await templates.pglite();
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (serverUrl) process.env[POSTGRES_TEMPLATE_ENV] = await templates.postgres(serverUrl);
  return () => templates.dispose();
}

let ownTemplates: MigratedTemplates | undefined;

/** The global setup's templates when there is one, else this process's own (made on first use). */
function migratedTemplates(): Pick<MigratedTemplates, 'pglite' | 'postgres'> {
  const sharedFolder = process.env[PGLITE_TEMPLATE_ENV];
  const sharedDatabase = process.env[POSTGRES_TEMPLATE_ENV];
  if (ownTemplates === undefined && (sharedFolder === undefined || sharedDatabase === undefined)) {
    ownTemplates = createMigratedTemplates();
    const made = ownTemplates;
    process.once('beforeExit', () => void made.dispose());
  }
  return {
    pglite: () =>
      sharedFolder === undefined ? (ownTemplates as MigratedTemplates).pglite() : Promise.resolve(sharedFolder),
    postgres: (serverUrl) =>
      sharedDatabase === undefined
        ? (ownTemplates as MigratedTemplates).postgres(serverUrl)
        : Promise.resolve(sharedDatabase),
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
  /** A database to copy (`CREATE DATABASE ... TEMPLATE`); none: an empty one. */
  readonly template?: string;
}

/** A new, empty database on the PostgreSQL server at `serverUrl` (tests, the bench). */
export async function createThrowawayDatabase(
  serverUrl: string,
  { prefix, hint, template }: ThrowawayDatabaseOptions,
): Promise<ThrowawayDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const copy = template === undefined ? '' : ` TEMPLATE ${template}`;
  await withServerClient(serverUrl, hint, (client) => client.query(`CREATE DATABASE ${name}${copy}`));
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

/** The actor tests act as where the audit log needs one: the command line, as a user named `test`. */
export const TEST_ACTOR: AuditActor = commandLineActor('test');

/** The team of every token and subscription a test makes without naming one: the migration's default. */
export const TEST_TEAM = 'default';

/** What `issueToken` needs, for a test: the default team and the test actor unless given. */
export function testToken(
  options: Omit<IssueTokenOptions, 'team' | 'actor'> & Partial<Pick<IssueTokenOptions, 'team' | 'actor'>>,
): IssueTokenOptions {
  return { team: TEST_TEAM, actor: TEST_ACTOR, ...options };
}

/** What `createWebhook` needs, for a test: the default team, the default cap and the test actor unless given. */
export function testWebhook(
  input: Omit<NewWebhookInput, 'team' | 'teamLimit' | 'actor'> &
    Partial<Pick<NewWebhookInput, 'team' | 'teamLimit' | 'actor'>>,
): NewWebhookInput {
  return { team: TEST_TEAM, teamLimit: WEBHOOK_LIMIT, actor: TEST_ACTOR, ...input };
}

/** Waits until `check` holds (it may ask asynchronously), asking every `intervalMs`; fails after `timeoutMs`. */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 5_000,
  intervalMs = 5,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
