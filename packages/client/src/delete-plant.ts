import { operations } from '@plant-store/schema';
import type { CallOptions, ClientContext } from './client-context.js';
import { sendDelete } from './send-delete.js';

/**
 * `DELETE /plants/{id}`: resolves when the plant is gone; a PlantStoreError with `error` 404
 * when there was none. Retried only on the service's own 503/429 Error, and a retry answered 404
 * resolves (see sendDelete); after any other failure, `getPlant` tells whether the plant is
 * still there.
 */
export async function deletePlant(context: ClientContext, id: bigint, options: CallOptions = {}): Promise<void> {
  await sendDelete(context, operations.deletePlant, { id }, options);
}
