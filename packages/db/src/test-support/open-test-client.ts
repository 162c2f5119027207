import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaClient } from '../generated/prisma/client.js';
import { applyMigrations } from '../migrate.js';
import { insertPlants, type PlantInsert } from '../plants/insert-plants.js';
import type { SqlRunner } from '../sql-runner.js';
import type { TestStorage } from '../testing.js';
import { fanOutEvents } from '../webhooks/fan-out-events.js';

/** The driver and the Prisma client on it, as database.ts builds them, over migrated storage. */
export interface TestClient {
  readonly prisma: PrismaClient;
  readonly sql: SqlRunner;
  /** Rows of a test query, every value as the query casts it (ids as text: exact on both drivers). */
  rows<TRow>(text: string, values?: unknown[]): Promise<TRow[]>;
  close(): Promise<void>;
}

/**
 * Opens `storage` the way openDatabase does, without the repository around it, so that a test
 * can call the repository functions and look at the tables. On PostgreSQL each call opens
 * another pool: two of them stand for two replicas.
 */
export async function openTestClient(storage: TestStorage, poolSize = 8): Promise<TestClient> {
  if (storage.engine === 'postgres') {
    const url = storage.databaseUrl ?? '';
    await applyMigrations({ kind: 'postgres', connectionString: url });
    const pool = new pg.Pool({ connectionString: url, max: poolSize });
    // As in database.ts: a connection the server ends (the throwaway database dropped while the
    // pool winds down) must not end the test run.
    pool.on('error', () => {});
    return testClient(new PrismaClient({ adapter: new PrismaPg(pool) }), pool, () => pool.end());
  }
  const pglite = await PGlite.create(join(storage.dataDir, 'pgdata'));
  await applyMigrations({ kind: 'pglite', client: pglite });
  return testClient(new PrismaClient({ adapter: new PrismaPGlite(pglite) }), pglite, () => pglite.close());
}

function testClient(prisma: PrismaClient, sql: SqlRunner, closeDriver: () => Promise<void>): TestClient {
  return {
    prisma,
    sql,
    async rows<TRow>(text: string, values: unknown[] = []) {
      return (await sql.query<TRow>(text, values)).rows;
    },
    async close() {
      await prisma.$disconnect();
      await closeDriver();
    },
  };
}

/**
 * insertPlants, then the dispatcher's fan-out until no event waits: the deliveries a test of
 * claims, attempts or retention starts from.
 */
export async function insertPlantsFannedOut(sql: SqlRunner, plants: readonly PlantInsert[]): Promise<void> {
  await insertPlants(sql, plants);
  await fanOutAll(sql);
}

/** The dispatcher's fan-out, batch after batch, until no event waits: the deliveries written. */
export async function fanOutAll(sql: SqlRunner): Promise<number> {
  let deliveries = 0;
  for (;;) {
    const result = await fanOutEvents(sql, { maxDeliveries: 1024 });
    deliveries += result.deliveries;
    if (result.events === 0) return deliveries;
  }
}
