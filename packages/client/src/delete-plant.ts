import { operations, PlantIdSchema } from '@plant-store/schema';
import { type CallOptions, type ClientContext, operationTarget } from './client-context.js';
import { parseInput } from './parse-input.js';
import { sendDelete } from './send-delete.js';

/**
 * `DELETE /plants/{id}`: resolves when the plant is gone; a PlantStoreError with `error` 404
 * when there was none. Retried only on the service's own 503/429 Error, and a retry answered 404
 * resolves (see sendDelete); after any other failure, `getPlant` tells whether the plant is
 * still there.
 */
export async function deletePlant(context: ClientContext, id: bigint, options: CallOptions = {}): Promise<void> {
  const plantId = parseInput(PlantIdSchema, id);
  await sendDelete(context, operationTarget(context, operations.deletePlant, { id: plantId }), options);
}
