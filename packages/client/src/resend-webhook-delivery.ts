import {
  DeliveryIdSchema,
  operations,
  type WebhookDelivery,
  WebhookDeliverySchema,
  WebhookIdSchema,
} from '@plant-store/schema';
import { type CallOptions, type ClientContext, operationTarget } from './client-context.js';
import { contractViolation, parseAnswer } from './parse-answer.js';
import { parseInput } from './parse-input.js';
import { type PlantStoreRequest, sendRequest } from './send-request.js';

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
  const id = parseInput(WebhookIdSchema, webhookId);
  const delivery = parseInput(DeliveryIdSchema, deliveryId);
  const request: PlantStoreRequest = {
    ...operationTarget(context, operations.resendWebhookDelivery, { id, deliveryId: delivery }),
    retryMode: 'idempotent',
    signal: options.signal,
  };
  const answer = await sendRequest(context.transport, request);
  const resent = parseAnswer(WebhookDeliverySchema, answer, request);
  if (resent.id !== delivery) throw contractViolation(answer, request, `id ${resent.id} is not ${delivery}`);
  return resent;
}
