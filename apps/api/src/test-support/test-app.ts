import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Database, type DatabaseOptions, openDatabase } from '@plant-store/db';
import { createTestStorage, type TestEngine, type TestStorage } from '@plant-store/db/testing';
import { type AppDependencies, createApp } from '../app.js';

/** The real app on a real port over a fresh migrated database, in the test's own process (and clock). */
export interface TestApp {
  readonly storage: TestStorage;
  readonly db: Database;
  readonly url: string;
  /** Closes the port, the database and the storage. */
  close(): Promise<void>;
}

export async function startTestApp(
  engine: TestEngine,
  options: {
    readonly database?: Partial<Omit<DatabaseOptions, 'url' | 'dataDir'>>;
    readonly app?: Partial<Omit<AppDependencies, 'db'>>;
  } = {},
): Promise<TestApp> {
  const storage = await createTestStorage(engine, { migrated: true });
  const db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir, ...options.database });
  const server: Server = createApp({ db, bodyLimitBytes: 65_536, ...options.app }).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    storage,
    db,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await db.close();
      await storage.dispose();
    },
  };
}
