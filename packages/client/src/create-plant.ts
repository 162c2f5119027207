import { type NewPlantInput, operations, type StoredPlant } from '@plant-store/schema';
import { callOperation } from './call-operation.js';
import type { CallOptions, ClientContext } from './client-context.js';

/**
 * `POST /plants`: stores the plant and returns it as stored. Retried like a read: the service
 * answers the same id with the same name and tag again with 200 and changes nothing, so a
 * create whose answer was lost is safe to send again.
 */
export async function createPlant(
  context: ClientContext,
  plant: NewPlantInput,
  options: CallOptions = {},
): Promise<StoredPlant> {
  const { input, output, violation } = await callOperation(
    context,
    operations.createPlant,
    { params: {}, body: plant, retryMode: 'idempotent' },
    options,
  );
  if (output.id !== input.body.id) throw violation(`id ${output.id} is not ${input.body.id}`);
  return output;
}
