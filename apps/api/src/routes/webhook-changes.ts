import type { Database } from '@plant-store/db';
import { SECRET_GRACE_PERIOD_DEFAULT_SECONDS } from '@plant-store/schema';
import { invalidRequest } from '../http/api-error.js';
import { actorOf, teamScopeOf } from '../http/caller.js';
import { checkWebhookUrl, type UrlPolicy } from '../webhooks/url-policy.js';
import type { Handlers } from './mount-operations.js';
import { webhookNotFound } from './webhooks.js';
import { toWebhook, toWebhookDelivery } from './webhooks-wire.js';

export interface WebhookChangeHandlersOptions {
  readonly db: Pick<Database, 'updateWebhook' | 'rotateWebhookSecret' | 'sendWebhookTest'>;
  /** Which receivers a new `url` may name (as at registration). */
  readonly urlPolicy: UrlPolicy;
}

/**
 * What an owner does to a subscription after creating it: change it (a merge patch, enabling and
 * disabling included), rotate its secret, send it a test event. Another team's answers 404, as
 * every webhook route does; each is recorded in the audit log by the repository.
 */
export function webhookChangeHandlers({
  db,
  urlPolicy,
}: WebhookChangeHandlersOptions): Pick<Handlers, 'updateWebhook' | 'rotateWebhookSecret' | 'testWebhook'> {
  return {
    updateWebhook: async ({ params: { id }, body }, caller) => {
      if (body.url !== undefined) {
        const refusal = await checkWebhookUrl(body.url, urlPolicy);
        if (refusal !== null) throw invalidRequest(refusal);
      }
      const updated = await db.updateWebhook(id, body, { ...teamScopeOf(caller), actor: actorOf(caller) });
      if (updated === null) throw webhookNotFound(id);
      return toWebhook(updated);
    },
    rotateWebhookSecret: async ({ params: { id }, body }, caller) => {
      const grace = body.gracePeriodSeconds ?? SECRET_GRACE_PERIOD_DEFAULT_SECONDS;
      const rotated = await db.rotateWebhookSecret(id, grace, { ...teamScopeOf(caller), actor: actorOf(caller) });
      if (rotated === null) throw webhookNotFound(id);
      return {
        secret: rotated.secret,
        ...(rotated.previousSecretExpiresAt === null
          ? {}
          : { previousSecretExpiresAt: rotated.previousSecretExpiresAt.toISOString() }),
      };
    },
    testWebhook: async ({ params: { id } }, caller) => {
      const delivery = await db.sendWebhookTest(id, { ...teamScopeOf(caller), actor: actorOf(caller) });
      if (delivery === null) throw webhookNotFound(id);
      return toWebhookDelivery(delivery);
    },
  };
}
