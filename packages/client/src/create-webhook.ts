import { type CreatedWebhook, type NewWebhook, operations } from '@plant-store/schema';
import { callOperation } from './call-operation.js';
import type { CallOptions, ClientContext } from './client-context.js';

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
  const { input, output, violation } = await callOperation(
    context,
    operations.createWebhook,
    { params: {}, body: webhook, retryMode: 'unprocessed-only' },
    options,
  );
  if (output.url !== input.body.url) throw violation(`url ${output.url} is not ${input.body.url}`);
  return output;
}
