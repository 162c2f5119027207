import { type Database, WebhookLimitError } from '@plant-store/db';
import { ErrorCode } from '@plant-store/schema';
import { ApiError, invalidRequest } from '../http/api-error.js';
import { actorOf, teamScopeOf } from '../http/caller.js';
import { checkWebhookUrl, type UrlPolicy } from '../webhooks/url-policy.js';
import type { HandlersOf } from './mount-operations.js';
import { webhookChangeHandlers } from './webhook-changes.js';
import { toCreatedWebhook, toWebhook, toWebhookDelivery } from './webhooks-wire.js';

export interface WebhookHandlersOptions {
  readonly db: Pick<
    Database,
    | 'createWebhook'
    | 'listWebhooks'
    | 'deleteWebhook'
    | 'listDeliveries'
    | 'resendDelivery'
    | 'updateWebhook'
    | 'rotateWebhookSecret'
    | 'sendWebhookTest'
    | 'resendDeliveries'
  >;
  /** Which receivers may be registered: public addresses only, unless private networks are allowed. */
  readonly urlPolicy: UrlPolicy;
  /** Most subscriptions one team may hold. */
  readonly perTeamLimit: number;
}

/**
 * Subscriptions and their deliveries, each team's its own: another team's subscription answers
 * 404 as if it did not exist, unless the caller holds platform:admin. A subscription belongs to
 * the team of the token that creates it.
 */
export function webhookHandlers({ db, urlPolicy, perTeamLimit }: WebhookHandlersOptions): HandlersOf<'webhooks'> {
  return {
    createWebhook: async ({ body }, caller) => {
      // The schema judged the form; this resolves the host and refuses private addresses.
      const refusal = await checkWebhookUrl(body.url, urlPolicy);
      if (refusal !== null) throw invalidRequest(refusal);
      const input = { ...body, team: caller.token.team, teamLimit: perTeamLimit, actor: actorOf(caller) };
      try {
        return toCreatedWebhook(await db.createWebhook(input));
      } catch (error) {
        if (error instanceof WebhookLimitError) throw new ApiError(ErrorCode.Conflict, error.message);
        throw error;
      }
    },
    listWebhooks: async (_input, caller) => (await db.listWebhooks(teamScopeOf(caller))).map(toWebhook),
    deleteWebhook: async ({ params: { id } }, caller) => {
      if (!(await db.deleteWebhook(id, { ...teamScopeOf(caller), actor: actorOf(caller) }))) throw webhookNotFound(id);
    },
    listWebhookDeliveries: async ({ params: { id }, query }, caller) => {
      const page = await db.listDeliveries(id, query, teamScopeOf(caller));
      if (page === null) throw webhookNotFound(id);
      return { items: page.deliveries.map(toWebhookDelivery), hasMore: page.hasMore };
    },
    resendWebhookDelivery: async ({ params: { id, deliveryId } }, caller) => {
      const delivery = await db.resendDelivery(id, deliveryId, { ...teamScopeOf(caller), actor: actorOf(caller) });
      if (delivery === null) throw deliveryNotFound(id, deliveryId);
      return toWebhookDelivery(delivery);
    },
    ...webhookChangeHandlers({ db, urlPolicy }),
    resendWebhookDeliveries: async ({ params: { id }, body }, caller) => {
      const { createdFrom, createdBefore, ...bounds } = body;
      const input = {
        ...bounds,
        ...(createdFrom === undefined ? {} : { createdFrom: instantOf(createdFrom, 'createdFrom') }),
        ...(createdBefore === undefined ? {} : { createdBefore: instantOf(createdBefore, 'createdBefore') }),
      };
      const resent = await db.resendDeliveries(id, input, { ...teamScopeOf(caller), actor: actorOf(caller) });
      if (resent === null) throw webhookNotFound(id);
      return { resent: resent.deliveryIds.length, deliveryIds: resent.deliveryIds, hasMore: resent.hasMore };
    },
  };
}

/** An RFC 3339 instant the schema accepted, as a Date; a leap second (`:60`), which no Date holds, is a 400. */
function instantOf(text: string, field: string): Date {
  const instant = new Date(text);
  if (Number.isNaN(instant.getTime()))
    throw invalidRequest(`${field} must be an instant a clock can show (no leap second)`);
  return instant;
}

export function webhookNotFound(id: string): ApiError {
  return new ApiError(ErrorCode.NotFound, `no webhook with id ${id}`);
}

export function deliveryNotFound(webhookId: string, deliveryId: bigint): ApiError {
  return new ApiError(ErrorCode.NotFound, `webhook ${webhookId} has no delivery with id ${deliveryId}`);
}
