import {
  type CreatedWebhook,
  CreatedWebhookSchema,
  type NewWebhook,
  NewWebhookSchema,
  operations,
  stringifyJson,
} from '@plant-store/schema';
import { type CallOptions, type ClientContext, operationTarget } from './client-context.js';
import { contractViolation, parseAnswer } from './parse-answer.js';
import { parseInput } from './parse-input.js';
import { type PlantStoreRequest, sendRequest } from './send-request.js';

/**
 * `POST /webhooks`: registers a receiver and returns it with its signing secret, which is shown
 * this once only. The URL's form is checked here before sending; whether its host is a public
 * address is the service's check (a 400 with `error` 400 when it is not).
 *
 * Retried only when the service itself answered its Error body with `error` 503 or 429: each
 * create registers another subscription, so after a lost answer a retry would register a
 * second one (and the first one's secret would be lost). `listWebhooks` tells what exists.
 */
export async function createWebhook(
  context: ClientContext,
  webhook: NewWebhook,
  options: CallOptions = {},
): Promise<CreatedWebhook> {
  const newWebhook = parseInput(NewWebhookSchema, webhook);
  const request: PlantStoreRequest = {
    ...operationTarget(context, operations.createWebhook, {}),
    body: stringifyJson(newWebhook),
    retryMode: 'unprocessed-only',
    signal: options.signal,
  };
  const answer = await sendRequest(context.transport, request);
  const created = parseAnswer(CreatedWebhookSchema, answer, request);
  if (created.url !== newWebhook.url) {
    throw contractViolation(answer, request, `url ${created.url} is not ${newWebhook.url}`);
  }
  return created;
}
