import type Router from '@koa/router';
import { type Database, WebhookLimitError } from '@plant-store/db';
import {
  DeliveryIdSchema,
  ErrorCode,
  ListDeliveriesQuerySchema,
  type NewWebhook,
  NewWebhookSchema,
  WebhookIdSchema,
} from '@plant-store/schema';
import * as v from 'valibot';
import { ApiError, invalidRequest } from '../http/api-error.js';
import type { AppState } from '../http/app-state.js';
import { nextPageLink } from '../http/next-page-link.js';
import { readInteger, readQueryParameters, readSmallInteger } from '../http/query.js';
import { respondJson } from '../http/respond-json.js';
import { parseInput } from '../http/validate.js';
import { bearerAuth } from '../middleware/bearer-auth.js';
import { jsonBody } from '../middleware/json-body.js';
import { checkWebhookUrl, type UrlPolicy } from '../webhooks/url-policy.js';
import { toCreatedWebhook, toWebhook, toWebhookDelivery } from './webhooks-wire.js';

export interface WebhookRoutesOptions {
  readonly db: Pick<
    Database,
    'createWebhook' | 'listWebhooks' | 'deleteWebhook' | 'listDeliveries' | 'resendDelivery' | 'authenticateToken'
  >;
  readonly bodyLimitBytes: number;
  /** Which receivers may be registered: public addresses only, unless private networks are allowed. */
  readonly urlPolicy: UrlPolicy;
}

/** Subscriptions and their deliveries; every operation needs the `webhooks:manage` scope. */
export function addWebhookRoutes(
  router: Router<AppState>,
  { db, bodyLimitBytes, urlPolicy }: WebhookRoutesOptions,
): void {
  const manage = bearerAuth(db.authenticateToken, 'webhooks:manage');

  router.post('/webhooks', manage, jsonBody({ limitBytes: bodyLimitBytes }), async (ctx) => {
    const newWebhook = parseInput(NewWebhookSchema, ctx.state.jsonBody);
    // The schema judged the form; this resolves the host and refuses private addresses.
    const refusal = await checkWebhookUrl(newWebhook.url, urlPolicy);
    if (refusal !== null) throw invalidRequest(refusal);
    const created = await createOrConflict(db, newWebhook);
    respondJson(ctx, 201, toCreatedWebhook(created));
  });

  router.get('/webhooks', manage, async (ctx) => {
    respondJson(ctx, 200, (await db.listWebhooks()).map(toWebhook));
  });

  router.delete('/webhooks/:id', manage, async (ctx) => {
    const id = readWebhookId(ctx.params.id);
    if (!(await db.deleteWebhook(id))) throw webhookNotFound(id);
    ctx.status = 204;
  });

  router.get('/webhooks/:id/deliveries', manage, async (ctx) => {
    const id = readWebhookId(ctx.params.id);
    const { limit, after } = readQueryParameters(ctx.querystring, ['limit', 'after']);
    const query = parseInput(ListDeliveriesQuerySchema, {
      ...(limit === undefined ? {} : { limit: readSmallInteger(limit) }),
      ...(after === undefined ? {} : { after: readInteger(after) }),
    });
    const page = await db.listDeliveries(id, query);
    if (page === null) throw webhookNotFound(id);
    const last = page.deliveries.at(-1);
    if (page.hasMore && last) ctx.set('Link', nextPageLink({ limit: String(query.limit), after: String(last.id) }));
    respondJson(ctx, 200, page.deliveries.map(toWebhookDelivery));
  });

  router.post('/webhooks/:id/deliveries/:deliveryId/resend', manage, async (ctx) => {
    const id = readWebhookId(ctx.params.id);
    const deliveryId = parseInput(DeliveryIdSchema, readInteger(ctx.params.deliveryId ?? ''));
    const delivery = await db.resendDelivery(id, deliveryId);
    if (delivery === null) {
      throw new ApiError(ErrorCode.NotFound, `webhook ${id} has no delivery with id ${deliveryId}`);
    }
    respondJson(ctx, 202, toWebhookDelivery(delivery));
  });
}

/** Registers the webhook; past the cap on subscriptions, a 409 naming it. */
async function createOrConflict(db: WebhookRoutesOptions['db'], newWebhook: NewWebhook) {
  try {
    return await db.createWebhook(newWebhook);
  } catch (error) {
    if (error instanceof WebhookLimitError) throw new ApiError(ErrorCode.Conflict, error.message);
    throw error;
  }
}

/**
 * The `{id}` of `/webhooks/{id}`: a UUID. Anything else names no webhook, so it is a 404 (not a
 * 400: the id is opaque to clients, who only ever send back ids the service gave them).
 */
function readWebhookId(text: string | undefined): string {
  if (text === undefined || !v.is(WebhookIdSchema, text)) {
    throw new ApiError(ErrorCode.NotFound, 'no webhook has this id (webhook ids are UUIDs)');
  }
  return text;
}

function webhookNotFound(id: string): ApiError {
  return new ApiError(ErrorCode.NotFound, `no webhook with id ${id}`);
}
