import { PlantIdSchema } from '@plant-store/schema';
import { type CallOptions, type ClientContext, plantUrl } from './client-context.js';
import { parseInput } from './parse-input.js';
import type { PlantStoreError } from './plant-store-error.js';
import { sendRequest } from './send-request.js';

/**
 * `DELETE /plants/{id}`: resolves when the plant is gone; a PlantStoreError with `error` 404
 * when there was none.
 *
 * Retried only when the service itself answered its Error body with `error` 503 or 429. Any
 * other failure is thrown at once: after a lost answer, a timeout or a gateway's 502/503/504
 * (which may have forwarded the request) the delete may have happened. `getPlant` tells whether
 * the plant is still there.
 *
 * The service may also answer 503 when its database connection was lost after the delete
 * committed. So when a retry (attempt 2 or later) is answered 404 by the service, the call
 * resolves: the plant is gone, which is what was asked. (It then cannot tell whether this call
 * deleted it, or whether it was already gone before.)
 */
export async function deletePlant(context: ClientContext, id: bigint, options: CallOptions = {}): Promise<void> {
  const plantId = parseInput(PlantIdSchema, id);
  await sendRequest(context.transport, {
    method: 'DELETE',
    url: plantUrl(context, plantId),
    successStatus: 204,
    retryMode: 'unprocessed-only',
    doneByEarlierAttempt: isNotFound,
    signal: options.signal,
  });
}

/** The service's own 404 Error: no such plant (a gateway's 404 page is not the service speaking). */
function isNotFound(error: PlantStoreError): boolean {
  return error.kind === 'error-response' && error.status === 404 && error.error === 404;
}
