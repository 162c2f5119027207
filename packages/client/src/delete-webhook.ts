import { WebhookIdSchema } from '@plant-store/schema';
import { type CallOptions, type ClientContext, webhookUrl } from './client-context.js';
import { parseInput } from './parse-input.js';
import type { PlantStoreError } from './plant-store-error.js';
import { sendRequest } from './send-request.js';

/**
 * `DELETE /webhooks/{id}`: resolves when the subscription (and its deliveries) is gone; a
 * PlantStoreError with `error` 404 when there was none. Retried as `deletePlant` is: only on
 * the service's own 503/429 Error, and a retry answered 404 resolves (an earlier attempt
 * deleted it).
 */
export async function deleteWebhook(context: ClientContext, id: string, options: CallOptions = {}): Promise<void> {
  const webhookId = parseInput(WebhookIdSchema, id);
  await sendRequest(context.transport, {
    method: 'DELETE',
    url: webhookUrl(context, webhookId),
    successStatus: 204,
    retryMode: 'unprocessed-only',
    doneByEarlierAttempt: isNotFound,
    signal: options.signal,
  });
}

/** The service's own 404 Error: no such webhook. */
function isNotFound(error: PlantStoreError): boolean {
  return error.kind === 'error-response' && error.status === 404 && error.error === 404;
}
