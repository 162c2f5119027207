import { operations, type WebhookDelivery } from '@plant-store/schema';
import { callOperation } from './call-operation.js';
import type { CallOptions, ClientContext } from './client-context.js';

/**
 * `POST /webhooks/{id}/test`: queues a `webhook.test` event to the subscription and returns its
 * delivery (pending; `eventType` `webhook.test`, `plantId` 0). Retried only when the service
 * itself answered its Error body with `error` 503 or 429: each call sends another test event.
 */
export async function sendWebhookTest(
  context: ClientContext,
  id: string,
  options: CallOptions = {},
): Promise<WebhookDelivery> {
  const { input, output, violation } = await callOperation(
    context,
    operations.testWebhook,
    { params: { id }, retryMode: 'unprocessed-only' },
    options,
  );
  if (output.webhookId !== input.params.id) throw violation(`webhookId ${output.webhookId} is not ${input.params.id}`);
  return output;
}
