import { operations, type StoredPlant } from '@plant-store/schema';
import { callOperation } from './call-operation.js';
import type { CallOptions, ClientContext } from './client-context.js';
import type { VersionedStoredPlant } from './plant-versions.js';
import { versionOf } from './plant-versions.js';

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

/** `GET /plants/{id}` with the plant's version (its ETag), for a later change under `ifMatch`. */
export async function getVersionedPlant(
  context: ClientContext,
  id: bigint,
  options: CallOptions = {},
): Promise<VersionedStoredPlant> {
  const { input, output, answer, violation } = await callOperation(
    context,
    operations.getPlant,
    { params: { id }, retryMode: 'idempotent' },
    options,
  );
  if (output.id !== input.params.id) throw violation(`id ${output.id} is not ${input.params.id}`);
  const version = versionOf(answer);
  if (version === null) throw violation('no version in its ETag');
  return { plant: output, version };
}
