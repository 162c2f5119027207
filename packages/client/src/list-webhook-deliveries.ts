import {
  type ListDeliveriesQueryInput,
  ListDeliveriesQuerySchema,
  type WebhookDelivery,
  WebhookDeliveryListSchema,
  WebhookIdSchema,
} from '@plant-store/schema';
import { type CallOptions, type ClientContext, deliveriesUrl } from './client-context.js';
import { type NextDeliveriesQuery, readNextDeliveriesPage } from './next-page.js';
import { contractViolation, parseAnswer } from './parse-answer.js';
import { parseInput } from './parse-input.js';
import { type PlantStoreRequest, sendRequest } from './send-request.js';

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
  const url = deliveriesUrl(context, id);
  url.search = new URLSearchParams({
    limit: String(parsed.limit),
    ...(parsed.after === undefined ? {} : { after: String(parsed.after) }),
  }).toString();
  const request: PlantStoreRequest = {
    method: 'GET',
    url,
    successStatus: 200,
    retryMode: 'idempotent',
    signal: options.signal,
  };
  const answer = await sendRequest(context.transport, request);
  const deliveries = parseAnswer(WebhookDeliveryListSchema, answer, request);

  // What the iterator relies on to visit every delivery once: checked, not assumed.
  if (deliveries.length > parsed.limit) {
    throw contractViolation(answer, request, `${deliveries.length} deliveries, more than limit ${parsed.limit}`);
  }
  let previous = parsed.after;
  for (const delivery of deliveries) {
    if (previous !== undefined && delivery.id <= previous) {
      throw contractViolation(answer, request, `id ${delivery.id} does not come after ${previous}`);
    }
    if (delivery.webhookId.toLowerCase() !== id.toLowerCase()) {
      throw contractViolation(answer, request, `delivery ${delivery.id} belongs to webhook ${delivery.webhookId}`);
    }
    previous = delivery.id;
  }
  return { deliveries, next: readNextDeliveriesPage(answer.headers.get('Link'), url, parsed) };
}
