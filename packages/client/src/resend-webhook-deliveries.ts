import { operations, type ResendDeliveriesInput, type ResentDeliveries } from '@plant-store/schema';
import { callOperation } from './call-operation.js';
import type { CallOptions, ClientContext } from './client-context.js';

/**
 * `POST /webhooks/{id}/deliveries/resend`: queues again, oldest first, up to `limit` (default and
 * at most 100) of the webhook's deliveries with `status` (default `failed`) in the range given
 * (`after`/`through` ids, `createdFrom`/`createdBefore` instants). `hasMore`: call again with
 * `after` the last id resent. A PlantStoreError with `error` 404 when there is no such webhook.
 * Retried like a read: a second resend queues the same deliveries again, and receivers
 * deduplicate by `webhook-id` (delivery is at-least-once).
 */
export async function resendWebhookDeliveries(
  context: ClientContext,
  webhookId: string,
  input: ResendDeliveriesInput = {},
  options: CallOptions = {},
): Promise<ResentDeliveries> {
  const { output, violation } = await callOperation(
    context,
    operations.resendWebhookDeliveries,
    { params: { id: webhookId }, body: input, retryMode: 'idempotent' },
    options,
  );
  if (output.resent !== output.deliveryIds.length) {
    throw violation(`resent ${output.resent} is not the ${output.deliveryIds.length} ids listed`);
  }
  return output;
}
