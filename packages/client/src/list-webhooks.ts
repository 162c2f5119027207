import { operations, type Webhook, WebhookListSchema } from '@plant-store/schema';
import { type CallOptions, type ClientContext, operationTarget } from './client-context.js';
import { parseAnswer } from './parse-answer.js';
import { type PlantStoreRequest, sendRequest } from './send-request.js';

/** `GET /webhooks`: every subscription, oldest first, without secrets. Retried like every read. */
export async function listWebhooks(context: ClientContext, options: CallOptions = {}): Promise<Webhook[]> {
  const request: PlantStoreRequest = {
    ...operationTarget(context, operations.listWebhooks, {}),
    retryMode: 'idempotent',
    signal: options.signal,
  };
  return parseAnswer(WebhookListSchema, await sendRequest(context.transport, request), request);
}
