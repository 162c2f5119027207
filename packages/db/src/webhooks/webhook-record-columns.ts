import { Prisma } from '../generated/prisma/client.js';

/**
 * A subscription row's columns as a WebhookRecord names them, for `RETURNING` and `SELECT` over
 * `public.webhook_subscriptions` (unqualified: one table in scope). The previous secret's expiry
 * only while it still signs.
 */
export const WEBHOOK_RECORD_COLUMNS = Prisma.raw(`id::text AS id, url, description, team, created_at AS "createdAt",
  event_types AS "eventTypes", enabled, disabled_at AS "disabledAt", disabled_reason AS "disabledReason",
  CASE WHEN previous_secret_expires_at > now() THEN previous_secret_expires_at END AS "previousSecretExpiresAt"`);
