import { operations } from '@plant-store/schema';
import type { CallOptions, ClientContext } from './client-context.js';
import { sendDelete } from './send-delete.js';

/**
 * `DELETE /webhooks/{id}`: resolves when the subscription (and its deliveries) is gone; a
 * PlantStoreError with `error` 404 when there was none. Retried as `deletePlant` is (see
 * sendDelete): only on the service's own 503/429 Error, and a retry answered 404 resolves.
 */
export async function deleteWebhook(context: ClientContext, id: string, options: CallOptions = {}): Promise<void> {
  await sendDelete(context, operations.deleteWebhook, { id }, options);
}
