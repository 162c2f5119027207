import {
  type ListDeliveriesQueryInput,
  ListDeliveriesQuerySchema,
  operations,
  type WebhookDelivery,
  WebhookDeliveryListSchema,
  WebhookIdSchema,
} from '@plant-store/schema';
import { type CallOptions, type ClientContext, operationTarget } from './client-context.js';
import { fetchPage } from './fetch-page.js';
import { type NextDeliveriesQuery, readNextDeliveriesPage } from './next-page.js';
import { parseInput } from './parse-input.js';

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
  const id = parseInput(WebhookIdSchema, webhookId);
  const parsed = parseInput(ListDeliveriesQuerySchema, query);
  const target = operationTarget(context, operations.listWebhookDeliveries, { id });
  const { items, link } = await fetchPage(
    context,
    {
      target,
      schema: WebhookDeliveryListSchema,
      query: parsed,
      noun: 'deliveries',
      misplaced: (delivery) =>
        delivery.webhookId.toLowerCase() === id.toLowerCase()
          ? null
          : `delivery ${delivery.id} belongs to webhook ${delivery.webhookId}`,
    },
    options,
  );
  return { deliveries: items, next: readNextDeliveriesPage(link, target.url, parsed) };
}
