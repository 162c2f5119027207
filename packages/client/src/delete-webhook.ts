import { operations, WebhookIdSchema } from '@plant-store/schema';
import { type CallOptions, type ClientContext, operationTarget } from './client-context.js';
import { parseInput } from './parse-input.js';
import { sendDelete } from './send-delete.js';

/**
 * `DELETE /webhooks/{id}`: resolves when the subscription (and its deliveries) is gone; a
 * PlantStoreError with `error` 404 when there was none. Retried as `deletePlant` is (see
 * sendDelete): only on the service's own 503/429 Error, and a retry answered 404 resolves.
 */
export async function deleteWebhook(context: ClientContext, id: string, options: CallOptions = {}): Promise<void> {
  const webhookId = parseInput(WebhookIdSchema, id);
  await sendDelete(context, operationTarget(context, operations.deleteWebhook, { id: webhookId }), options);
}
