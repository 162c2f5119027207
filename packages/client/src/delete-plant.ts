import { PlantIdSchema } from '@plant-store/schema';
import { type CallOptions, type ClientContext, plantUrl } from './client-context.js';
import { parseInput } from './parse-input.js';
import { sendRequest } from './send-request.js';

/**
 * `DELETE /plants/{id}`: resolves when the plant was deleted; a PlantStoreError with `error`
 * 404 when there was none. Retried only when the service answered 503 or 429, which mean it
 * did not delete: after a lost answer or a timeout the delete may have happened, and sending
 * it again would turn that success into a 404. Such a failure is thrown (kind `network` or
 * `timeout`); `getPlant` tells whether the plant is still there.
 */
export async function deletePlant(context: ClientContext, id: bigint, options: CallOptions = {}): Promise<void> {
  const plantId = parseInput(PlantIdSchema, id);
  await sendRequest(context.transport, {
    method: 'DELETE',
    url: plantUrl(context, plantId),
    successStatus: 204,
    retryMode: 'unprocessed-only',
    signal: options.signal,
  });
}
