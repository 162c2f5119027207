import { operations, type WebhookDelivery } from '@plant-store/schema';
import { callOperation } from './call-operation.js';
import type { CallOptions, ClientContext } from './client-context.js';

/**
 * `POST /webhooks/{id}/deliveries/{deliveryId}/resend`: queues the delivery to be attempted
 * again now, whatever its status, and returns it (pending). A PlantStoreError with `error` 404
 * when the webhook has no such delivery. Retried like a read: a second resend queues the same
 * delivery again, and receivers deduplicate by `webhook-id` anyway (delivery is at-least-once).
 */
export async function resendWebhookDelivery(
  context: ClientContext,
  webhookId: string,
  deliveryId: bigint,
  options: CallOptions = {},
): Promise<WebhookDelivery> {
  const { input, output, violation } = await callOperation(
    context,
    operations.resendWebhookDelivery,
    { params: { id: webhookId, deliveryId }, retryMode: 'idempotent' },
    options,
  );
  const { deliveryId: sent } = input.params;
  if (output.id !== sent) throw violation(`id ${output.id} is not ${sent}`);
  return output;
}
