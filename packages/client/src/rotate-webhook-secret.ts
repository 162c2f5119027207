import { operations, type RotatedWebhookSecret } from '@plant-store/schema';
import { callOperation } from './call-operation.js';
import type { CallOptions, ClientContext } from './client-context.js';

export interface RotateWebhookSecretOptions extends CallOptions {
  /** How long the previous secret signs too, in seconds: default 86400 (24 h); 0: it stops at once. */
  readonly gracePeriodSeconds?: number;
}

/**
 * `POST /webhooks/{id}/secret`: gives the subscription a new signing secret, returned this once
 * only, and until when the previous one signs beside it. Retried only when the service itself
 * answered its Error body with `error` 503 or 429: after a lost answer, a retry would rotate again
 * and the secret it answered would be lost.
 */
export async function rotateWebhookSecret(
  context: ClientContext,
  id: string,
  options: RotateWebhookSecretOptions = {},
): Promise<RotatedWebhookSecret> {
  const { gracePeriodSeconds, signal } = options;
  const { output } = await callOperation(
    context,
    operations.rotateWebhookSecret,
    {
      params: { id },
      body: gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds },
      retryMode: 'unprocessed-only',
    },
    signal === undefined ? {} : { signal },
  );
  return output;
}
