import {
  createPlantStoreClient,
  type PlantStoreClient,
  type PlantStoreClientOptions,
} from '../create-plant-store-client.js';
import { PlantStoreError } from '../plant-store-error.js';

export const TEST_TOKEN = 'pst_test-token_0123456789';

/** A client with tiny retry delays, so that retry tests take milliseconds. */
export function createTestClient(
  baseUrl: string,
  options: Partial<Omit<PlantStoreClientOptions, 'baseUrl'>> = {},
): PlantStoreClient {
  return createPlantStoreClient({
    baseUrl,
    token: TEST_TOKEN,
    retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 20 },
    ...options,
  });
}

/** The PlantStoreError that `promise` rejects with; fails when it resolves or rejects with something else. */
export async function caught(promise: Promise<unknown>): Promise<PlantStoreError> {
  const outcome = await promise.then(
    (value) => ({ resolved: value }),
    (error: unknown) => ({ rejected: error }),
  );
  if ('resolved' in outcome) throw new Error(`expected a PlantStoreError, got ${String(outcome.resolved)}`);
  if (!(outcome.rejected instanceof PlantStoreError)) throw outcome.rejected;
  return outcome.rejected;
}
