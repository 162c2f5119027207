import type { AuditActor } from '../audit/audit-records.js';
import { AUDIT_COLUMNS, auditValues } from '../audit/audit-sql.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { NOW_RFC3339 } from '../plants/plant-json.js';
import { translateError } from '../prisma-errors.js';
import { generateWebhookSecret } from './create-webhook.js';
import { deliveryRecordSelect, toDeliveryRecord } from './list-deliveries.js';
import type { TeamScope } from './manage-webhooks.js';
import { isWebhookId } from './webhook-id.js';
import { WEBHOOK_RECORD_COLUMNS } from './webhook-record-columns.js';
import type { DeliveryRecord, WebhookRecord } from './webhook-records.js';

/** Who changes a subscription, of which team (absent: any, platform:admin). */
export type WebhookChangeScope = TeamScope & { readonly actor: AuditActor };

/** A merge patch of a subscription: a field absent is kept; `description: null` removes it. */
export interface WebhookPatchInput {
  readonly url?: string | undefined;
  readonly description?: string | null | undefined;
  readonly eventTypes?: readonly string[] | undefined;
  readonly enabled?: boolean | undefined;
}

/** Why a subscription its owner disabled is disabled. */
function disabledByReason(actor: AuditActor): string {
  return actor.kind === 'token'
    ? `disabled by its owner (token ${actor.name})`
    : `disabled by ${actor.name} (command line)`;
}

/**
 * Applies a merge patch to a subscription (of `team`, when given), one statement: the row is
 * locked and read as it was (`before`), changed, and the audit log gets what changed, each kind
 * its own event: `webhook.updated` (url, description or event types; the patch in its details),
 * `webhook.enabled`, `webhook.disabled`. A patch that changes nothing records nothing. Disabling
 * stamps when and why; enabling clears that and the failure record (`failing_since`), so the
 * days of failures count afresh. The pending deliveries follow `enabled` by the migration's
 * trigger (they wait without a receiver while it is disabled). Null when there is no such
 * subscription.
 */
export async function updateWebhook(
  prisma: PrismaClient,
  id: string,
  patch: WebhookPatchInput,
  { team, actor }: WebhookChangeScope,
): Promise<WebhookRecord | null> {
  if (!isWebhookId(id)) return null;
  const setDescription = patch.description !== undefined;
  const eventTypes = patch.eventTypes === undefined ? null : [...patch.eventTypes];
  const enabled = patch.enabled ?? null;
  const { enabled: _, ...fields } = patch;
  const details = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
  try {
    const rows = await prisma.$queryRaw<{ id: string }[]>`WITH before AS (
  SELECT id, url, description, event_types, enabled
  FROM public.webhook_subscriptions
  WHERE id = ${id}::uuid AND (${team ?? null}::varchar IS NULL OR team = ${team ?? null}::varchar)
  FOR UPDATE
), changed AS (
  UPDATE public.webhook_subscriptions AS subscriptions
  SET url = coalesce(${patch.url ?? null}::text, subscriptions.url),
    description = CASE WHEN ${setDescription}::boolean THEN ${patch.description ?? null}::text ELSE subscriptions.description END,
    event_types = coalesce(${eventTypes}::text[], subscriptions.event_types),
    enabled = coalesce(${enabled}::boolean, subscriptions.enabled),
    disabled_at = CASE WHEN ${enabled}::boolean IS NULL OR ${enabled}::boolean = subscriptions.enabled THEN subscriptions.disabled_at
      WHEN ${enabled}::boolean THEN NULL ELSE now() END,
    disabled_reason = CASE WHEN ${enabled}::boolean IS NULL OR ${enabled}::boolean = subscriptions.enabled THEN subscriptions.disabled_reason
      WHEN ${enabled}::boolean THEN NULL ELSE ${disabledByReason(actor)}::text END,
    failing_since = CASE WHEN ${enabled}::boolean AND NOT subscriptions.enabled THEN NULL ELSE subscriptions.failing_since END
  FROM before
  WHERE subscriptions.id = before.id
  RETURNING subscriptions.id, subscriptions.team,
    (subscriptions.url, subscriptions.description, subscriptions.event_types)
      IS DISTINCT FROM (before.url, before.description, before.event_types) AS updated,
    CASE WHEN subscriptions.enabled = before.enabled THEN NULL ELSE subscriptions.enabled END AS switched
), audited AS (
  INSERT INTO public.audit_events (${AUDIT_COLUMNS})
  SELECT changed.team, ${auditValues(actor, 'webhook.updated', Prisma.sql`changed.id::text`, details)} FROM changed WHERE changed.updated
  UNION ALL
  SELECT changed.team, ${auditValues(actor, 'webhook.enabled', Prisma.sql`changed.id::text`, null)} FROM changed WHERE changed.switched
  UNION ALL
  SELECT changed.team, ${auditValues(actor, 'webhook.disabled', Prisma.sql`changed.id::text`, null)} FROM changed WHERE NOT changed.switched
)
SELECT id::text AS id FROM changed`;
    // Read afresh: the statement's own reads see the row as it was before its change.
    if (rows.length === 0) return null;
    const [record] = await prisma.$queryRaw<WebhookRecord[]>`SELECT ${WEBHOOK_RECORD_COLUMNS}
FROM public.webhook_subscriptions WHERE id = ${id}::uuid`;
    return record ?? null;
  } catch (error) {
    throw translateError(error);
  }
}

/** A rotated secret: the new one, and until when the previous one signs too (null: it stopped at once). */
export interface RotatedSecret {
  readonly secret: string;
  readonly previousSecretExpiresAt: Date | null;
}

/**
 * Gives a subscription (of `team`, when given) a new signing secret, one statement with its audit
 * event: for `gracePeriodSeconds` (database time) the secret it replaces signs every delivery as
 * well (claims read both; see claimDeliveries), then only the new one. A rotation within a grace
 * period drops the older secret at once: at most two sign. Null when there is no such subscription.
 */
export async function rotateWebhookSecret(
  prisma: PrismaClient,
  id: string,
  gracePeriodSeconds: number,
  { team, actor }: WebhookChangeScope,
): Promise<RotatedSecret | null> {
  if (!isWebhookId(id)) return null;
  const secret = generateWebhookSecret();
  const grace = Math.max(0, Math.floor(gracePeriodSeconds));
  try {
    const rows = await prisma.$queryRaw<{ expiresAt: Date | null }[]>`WITH rotated AS (
  UPDATE public.webhook_subscriptions
  SET previous_secret = CASE WHEN ${grace}::int > 0 THEN secret END,
    previous_secret_expires_at = CASE WHEN ${grace}::int > 0 THEN now() + ${grace}::int * interval '1 second' END,
    secret = ${secret}::text
  WHERE id = ${id}::uuid AND (${team ?? null}::varchar IS NULL OR team = ${team ?? null}::varchar)
  RETURNING id::text AS id, team, previous_secret_expires_at AS "expiresAt"
), audited AS (
  INSERT INTO public.audit_events (${AUDIT_COLUMNS})
  SELECT rotated.team, ${auditValues(actor, 'webhook.secret_rotated', Prisma.sql`rotated.id`, { gracePeriodSeconds: grace })}
  FROM rotated
)
SELECT "expiresAt" FROM rotated`;
    const [row] = rows;
    return row === undefined ? null : { secret, previousSecretExpiresAt: row.expiresAt };
  } catch (error) {
    throw translateError(error);
  }
}

/**
 * Sends a subscription (of `team`, when given) a `webhook.test` event, one statement: the event
 * (the envelope `{"type":"webhook.test","timestamp","data":{"webhookId"}}`, about no plant: plant
 * id 0, no version; written fanned out, never in the feed), its one delivery, pending and due now
 * (waiting without a receiver while the subscription is disabled), and its audit event. Null when
 * there is no such subscription.
 */
export async function sendWebhookTest(
  prisma: PrismaClient,
  id: string,
  { team, actor }: WebhookChangeScope,
): Promise<DeliveryRecord | null> {
  if (!isWebhookId(id)) return null;
  try {
    const rows = await prisma.$queryRaw<{ id: bigint }[]>`WITH owner AS (
  SELECT id, team, receiver, enabled FROM public.webhook_subscriptions
  WHERE id = ${id}::uuid AND (${team ?? null}::varchar IS NULL OR team = ${team ?? null}::varchar)
), event AS (
  INSERT INTO public.webhook_events (plant_id, type, payload, envelope, fanned_out_at)
  SELECT 0, 'webhook.test', body.doc, body.doc, now()
  FROM owner CROSS JOIN LATERAL (
    SELECT '{"type":"webhook.test","timestamp":"' || ${Prisma.raw(NOW_RFC3339)} || '","data":{"webhookId":"' || owner.id::text || '"}}' AS doc
  ) AS body
  RETURNING id
), delivery AS (
  INSERT INTO public.webhook_deliveries (event_id, subscription_id, status, next_attempt_at, receiver)
  SELECT event.id, owner.id, 'pending', now(), CASE WHEN owner.enabled THEN owner.receiver END
  FROM event CROSS JOIN owner
  RETURNING id
), audited AS (
  INSERT INTO public.audit_events (${AUDIT_COLUMNS})
  SELECT owner.team, ${auditValues(actor, 'webhook.tested', Prisma.sql`owner.id::text`, null)} FROM owner
)
SELECT id FROM delivery`;
    const [row] = rows;
    if (row === undefined) return null;
    const delivery = await prisma.webhookDelivery.findFirst({ where: { id: row.id }, select: deliveryRecordSelect });
    // Deleted (with its subscription) in between.
    return delivery === null ? null : toDeliveryRecord(delivery);
  } catch (error) {
    throw translateError(error);
  }
}
