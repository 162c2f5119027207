import { operations, type Webhook } from '@plant-store/schema';
import { callOperation } from './call-operation.js';
import type { CallOptions, ClientContext } from './client-context.js';

/** `GET /webhooks`: every subscription, oldest first, without secrets. Retried like every read. */
export async function listWebhooks(context: ClientContext, options: CallOptions = {}): Promise<Webhook[]> {
  return (await callOperation(context, operations.listWebhooks, { params: {}, retryMode: 'idempotent' }, options))
    .output;
}
