import { operations, type PlantPatchInput } from '@plant-store/schema';
import { callOperation } from './call-operation.js';
import type { CallOptions, ClientContext } from './client-context.js';
import { ifMatchHeader, type PreconditionOptions, type VersionedStoredPlant, versionOf } from './plant-versions.js';

export interface UpdatePlantOptions extends CallOptions, PreconditionOptions {}

/**
 * `PATCH /plants/{id}`: applies a merge patch of `name` and `tag` (`tag: null` removes it) and
 * returns the plant as it is now, with its version. With `ifMatch`, only while the plant has that
 * version (else a PlantStoreError with `error` 412). Retried like a read without `ifMatch` (the
 * same patch again changes nothing more); with it, only on the service's own 503/429 Error, since
 * a retry after a lost answer would find the version it set and answer 412.
 */
export async function updatePlant(
  context: ClientContext,
  id: bigint,
  patch: PlantPatchInput,
  options: UpdatePlantOptions = {},
): Promise<VersionedStoredPlant> {
  const headers = ifMatchHeader(options);
  const { input, output, answer, violation } = await callOperation(
    context,
    operations.updatePlant,
    {
      params: { id },
      body: patch,
      retryMode: headers === undefined ? 'idempotent' : 'unprocessed-only',
      ...(headers === undefined ? {} : { headers }),
    },
    options.signal === undefined ? {} : { signal: options.signal },
  );
  if (output.id !== input.params.id) throw violation(`id ${output.id} is not ${input.params.id}`);
  const version = versionOf(answer);
  if (version === null) throw violation('no version in its ETag');
  return { plant: output, version };
}
