import { type Database, WebhookLimitError } from '@plant-store/db';
import { ErrorCode, type NewWebhook } from '@plant-store/schema';
import { ApiError, invalidRequest } from '../http/api-error.js';
import { checkWebhookUrl, type UrlPolicy } from '../webhooks/url-policy.js';
import type { HandlersOf } from './mount-operations.js';
import { toCreatedWebhook, toWebhook, toWebhookDelivery } from './webhooks-wire.js';

export interface WebhookHandlersOptions {
  readonly db: Pick<Database, 'createWebhook' | 'listWebhooks' | 'deleteWebhook' | 'listDeliveries' | 'resendDelivery'>;
  /** Which receivers may be registered: public addresses only, unless private networks are allowed. */
  readonly urlPolicy: UrlPolicy;
}

/** Subscriptions and their deliveries. */
export function webhookHandlers({ db, urlPolicy }: WebhookHandlersOptions): HandlersOf<'webhooks'> {
  return {
    createWebhook: async ({ body }) => {
      // The schema judged the form; this resolves the host and refuses private addresses.
      const refusal = await checkWebhookUrl(body.url, urlPolicy);
      if (refusal !== null) throw invalidRequest(refusal);
      return toCreatedWebhook(await createOrConflict(db, body));
    },
    listWebhooks: async () => (await db.listWebhooks()).map(toWebhook),
    deleteWebhook: async ({ params: { id } }) => {
      if (!(await db.deleteWebhook(id))) throw webhookNotFound(id);
    },
    listWebhookDeliveries: async ({ params: { id }, query }) => {
      const page = await db.listDeliveries(id, query);
      if (page === null) throw webhookNotFound(id);
      return { items: page.deliveries.map(toWebhookDelivery), hasMore: page.hasMore };
    },
    resendWebhookDelivery: async ({ params: { id, deliveryId } }) => {
      const delivery = await db.resendDelivery(id, deliveryId);
      if (delivery === null) throw deliveryNotFound(id, deliveryId);
      return toWebhookDelivery(delivery);
    },
  };
}

/** Registers the webhook; past the cap on subscriptions, a 409 naming it. */
async function createOrConflict(db: WebhookHandlersOptions['db'], newWebhook: NewWebhook) {
  try {
    return await db.createWebhook(newWebhook);
  } catch (error) {
    if (error instanceof WebhookLimitError) throw new ApiError(ErrorCode.Conflict, error.message);
    throw error;
  }
}

export function webhookNotFound(id: string): ApiError {
  return new ApiError(ErrorCode.NotFound, `no webhook with id ${id}`);
}

export function deliveryNotFound(webhookId: string, deliveryId: bigint): ApiError {
  return new ApiError(ErrorCode.NotFound, `webhook ${webhookId} has no delivery with id ${deliveryId}`);
}
