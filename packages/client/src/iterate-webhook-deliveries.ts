import type { ListDeliveriesQueryInput, WebhookDelivery } from '@plant-store/schema';
import type { ClientContext } from './client-context.js';
import { listWebhookDeliveries } from './list-webhook-deliveries.js';

export interface IterateDeliveriesOptions {
  /** Deliveries per request, 1-100; default 20. */
  readonly pageSize?: number;
  /** Start after this delivery id, as a page's `after` does. */
  readonly after?: bigint;
  /** Aborts the walk; the pending `next()` throws a PlantStoreError of kind `aborted`. */
  readonly signal?: AbortSignal;
}

/**
 * Every delivery of a webhook in ascending id order, one page per request, following each
 * answer's `Link: rel="next"` until the last page has none (as `plants()` walks the plants).
 */
export async function* iterateWebhookDeliveries(
  context: ClientContext,
  webhookId: string,
  options: IterateDeliveriesOptions = {},
): AsyncGenerator<WebhookDelivery, void, undefined> {
  const { pageSize, after, signal } = options;
  let query: ListDeliveriesQueryInput | null = {
    ...(pageSize === undefined ? {} : { limit: pageSize }),
    ...(after === undefined ? {} : { after }),
  };
  while (query !== null) {
    const page = await listWebhookDeliveries(context, webhookId, query, signal === undefined ? {} : { signal });
    yield* page.deliveries;
    query = page.next;
  }
}
