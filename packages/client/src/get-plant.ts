import { operations, type StoredPlant } from '@plant-store/schema';
import { callOperation } from './call-operation.js';
import type { CallOptions, ClientContext } from './client-context.js';

/** `GET /plants/{id}`: the plant; a PlantStoreError with `error` 404 when there is none. */
export async function getPlant(context: ClientContext, id: bigint, options: CallOptions = {}): Promise<StoredPlant> {
  const { input, output, violation } = await callOperation(
    context,
    operations.getPlant,
    { params: { id }, retryMode: 'idempotent' },
    options,
  );
  if (output.id !== input.params.id) throw violation(`id ${output.id} is not ${input.params.id}`);
  return output;
}
