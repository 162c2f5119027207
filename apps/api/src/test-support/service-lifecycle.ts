import { createTestStorage, type TestEngine, type TestStorage } from '@plant-store/db/testing';
import { afterEach } from 'vitest';
import { startTestService, type TestService } from './test-service.js';

/**
 * For a describe block on one engine: storage and services that are disposed of after each test,
 * newest first (a service before its storage), and `cleanups` for anything else a test starts.
 */
export function serviceLifecycle(engine: TestEngine) {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return {
    cleanups,
    /** Migrated unless a test is about migrating (a copy of one migrated template: seconds faster). */
    async storage(migrated = true): Promise<TestStorage> {
      const created = await createTestStorage(engine, { migrated });
      cleanups.push(() => created.dispose());
      return created;
    },
    async start(on: TestStorage): Promise<TestService> {
      const service = await startTestService(on);
      cleanups.push(() => service.close());
      return service;
    },
  };
}
