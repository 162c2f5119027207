import { operations } from '@plant-store/schema';
import type { CallOptions, ClientContext } from './client-context.js';
import { ifMatchHeader, type PreconditionOptions } from './plant-versions.js';
import { sendDelete } from './send-delete.js';

export interface DeletePlantOptions extends CallOptions, PreconditionOptions {}

/**
 * `DELETE /plants/{id}`: resolves when the plant is gone; a PlantStoreError with `error` 404
 * when there was none. Retried only on the service's own 503/429 Error, and a retry answered 404
 * resolves (see sendDelete); after any other failure, `getPlant` tells whether the plant is
 * still there. With `ifMatch`, only while the plant has that version (else a PlantStoreError with
 * `error` 412, and nothing is deleted).
 */
export async function deletePlant(context: ClientContext, id: bigint, options: DeletePlantOptions = {}): Promise<void> {
  const { signal } = options;
  await sendDelete(
    context,
    operations.deletePlant,
    { id },
    signal === undefined ? {} : { signal },
    ifMatchHeader(options),
  );
}
