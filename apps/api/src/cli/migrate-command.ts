import { migrateDatabase } from '@plant-store/db';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';

/**
 * `plant-store migrate`: applies the pending migrations to the configured database and exits.
 * Safe to run from many replicas at once, or as a Kubernetes Job before them: on PostgreSQL
 * they take turns on Prisma's advisory lock, and a migration already applied is not run again.
 */
export async function runMigrateCommand(config: Config, log: Logger): Promise<void> {
  const applied = await migrateDatabase({ url: config.databaseUrl, dataDir: config.dataDir, lockWaitMs: 0 });
  if (applied.length > 0) log.info({ migrations: applied }, 'applied migrations');
  else log.info('database is up to date');
}
