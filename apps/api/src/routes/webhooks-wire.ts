import type { CreatedWebhook as CreatedWebhookRecord, DeliveryRecord, WebhookRecord } from '@plant-store/db';
import type { CreatedWebhook, Webhook, WebhookDelivery, WebhookDeliveryAttempt } from '@plant-store/schema';

/**
 * Webhook records as the wire contract spells them: dates as RFC 3339 strings, and fields the
 * record holds as null left out (the contract's `description?`, `statusCode?`...), never sent
 * as null. Typed with the schema package's types, so a shape that drifts does not compile.
 */
export function toWebhook(record: WebhookRecord): Webhook {
  return {
    id: record.id,
    url: record.url,
    ...(record.description === null ? {} : { description: record.description }),
    team: record.team,
    createdAt: record.createdAt.toISOString(),
    eventTypes: [...record.eventTypes],
    enabled: record.enabled,
    ...(record.disabledAt === null ? {} : { disabledAt: record.disabledAt.toISOString() }),
    ...(record.disabledReason === null ? {} : { disabledReason: record.disabledReason }),
    ...(record.previousSecretExpiresAt === null
      ? {}
      : { previousSecretExpiresAt: record.previousSecretExpiresAt.toISOString() }),
  };
}

/** The answer of `POST /webhooks`: the one time the secret is shown. */
export function toCreatedWebhook(record: CreatedWebhookRecord): CreatedWebhook {
  return { ...toWebhook(record), secret: record.secret };
}

export function toWebhookDelivery(record: DeliveryRecord): WebhookDelivery {
  return {
    id: record.id,
    webhookId: record.webhookId,
    eventId: record.eventId,
    eventType: record.eventType,
    plantId: record.plantId,
    status: record.status,
    ...(record.nextAttemptAt === null ? {} : { nextAttemptAt: record.nextAttemptAt.toISOString() }),
    createdAt: record.createdAt.toISOString(),
    ...(record.deliveredAt === null ? {} : { deliveredAt: record.deliveredAt.toISOString() }),
    attempts: record.attempts.map(
      (attempt): WebhookDeliveryAttempt => ({
        attemptedAt: attempt.attemptedAt.toISOString(),
        ...(attempt.statusCode === null ? {} : { statusCode: attempt.statusCode }),
        latencyMs: attempt.latencyMs,
        ...(attempt.error === null ? {} : { error: attempt.error }),
        ...(attempt.responseExcerpt == null ? {} : { responseExcerpt: attempt.responseExcerpt }),
      }),
    ),
  };
}
