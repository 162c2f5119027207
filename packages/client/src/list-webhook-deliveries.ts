import { type ListDeliveriesQueryInput, operations, type WebhookDelivery } from '@plant-store/schema';
import { callOperation } from './call-operation.js';
import { checkPage } from './check-page.js';
import type { CallOptions, ClientContext } from './client-context.js';
import { type NextDeliveriesQuery, readNextDeliveriesPage } from './next-page.js';

/** One page of `GET /webhooks/{id}/deliveries`. */
export interface WebhookDeliveriesPage {
  /** In ascending id order, each with every attempt so far. */
  readonly deliveries: WebhookDelivery[];
  /** The query of the next page (pass it to `listWebhookDeliveries`), or null when this page is the last. */
  readonly next: NextDeliveriesQuery | null;
}

/**
 * `GET /webhooks/{id}/deliveries`: one page of a webhook's deliveries in ascending id order,
 * `limit` (1-100, default 20) at most, starting after the id `after` when given. A PlantStoreError
 * with `error` 404 when there is no such webhook.
 */
export async function listWebhookDeliveries(
  context: ClientContext,
  webhookId: string,
  query: ListDeliveriesQueryInput = {},
  options: CallOptions = {},
): Promise<WebhookDeliveriesPage> {
  const result = await callOperation(
    context,
    operations.listWebhookDeliveries,
    { params: { id: webhookId }, query, retryMode: 'idempotent' },
    options,
  );
  const { id } = result.input.params;
  const deliveries = checkPage(result, {
    noun: 'deliveries',
    misplaced: (delivery) =>
      delivery.webhookId.toLowerCase() === id.toLowerCase()
        ? null
        : `delivery ${delivery.id} belongs to webhook ${delivery.webhookId}`,
  });
  const link = result.answer.headers.get('Link');
  return { deliveries, next: readNextDeliveriesPage(link, result.request.url, result.input.query) };
}
