import { operations, type Webhook, type WebhookPatchInput } from '@plant-store/schema';
import { callOperation } from './call-operation.js';
import type { CallOptions, ClientContext } from './client-context.js';

/**
 * `PATCH /webhooks/{id}`: applies a merge patch of `url`, `description` (null removes it),
 * `eventTypes` and `enabled` (false disables it, true enables it again and its waiting deliveries
 * go out), and returns the subscription as it is now. Retried like a read: the same patch again
 * changes nothing more.
 */
export async function updateWebhook(
  context: ClientContext,
  id: string,
  patch: WebhookPatchInput,
  options: CallOptions = {},
): Promise<Webhook> {
  const { input, output, violation } = await callOperation(
    context,
    operations.updateWebhook,
    { params: { id }, body: patch, retryMode: 'idempotent' },
    options,
  );
  if (output.id !== input.params.id) throw violation(`id ${output.id} is not ${input.params.id}`);
  return output;
}
