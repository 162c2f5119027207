import type { AuditActor } from '../audit/audit-records.js';
import { AUDIT_COLUMNS, auditValues } from '../audit/audit-sql.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { translateError } from '../prisma-errors.js';
import type { TeamScope } from './manage-webhooks.js';
import { isWebhookId } from './webhook-id.js';
import type { DeliveryPage, DeliveryRecord, DeliveryStatus } from './webhook-records.js';

export interface ListDeliveriesQuery {
  readonly limit: number;
  /** Only deliveries with a greater id (the previous page's last). */
  readonly after?: bigint;
  /** Only deliveries with this status. */
  readonly status?: DeliveryStatus;
}

/** The columns a DeliveryRecord is made of, for Prisma's `select`. */
export const deliveryRecordSelect = {
  id: true,
  eventId: true,
  subscriptionId: true,
  status: true,
  nextAttemptAt: true,
  createdAt: true,
  deliveredAt: true,
  event: { select: { plantId: true, type: true } },
  attempts: {
    select: { attemptedAt: true, statusCode: true, latencyMs: true, error: true, responseExcerpt: true },
    orderBy: { id: 'asc' },
  },
} as const;

interface DeliveryRow {
  readonly id: bigint;
  readonly eventId: string;
  readonly subscriptionId: string;
  readonly status: string;
  readonly nextAttemptAt: Date | null;
  readonly createdAt: Date;
  readonly deliveredAt: Date | null;
  readonly event: { readonly plantId: bigint; readonly type: string };
  readonly attempts: DeliveryRecord['attempts'];
}

/**
 * One page of a subscription's deliveries in ascending id order, each with every attempt
 * (oldest first), or null when there is no such subscription (of `team`, when given: another
 * team's answers as if it did not exist). Reads `limit + 1` deliveries at most, along the
 * (subscription_id, id) index, to know whether another page follows; with `status`, only those
 * that have it (filtered along the same index walk).
 */
export async function listDeliveries(
  prisma: PrismaClient,
  webhookId: string,
  { limit, after, status }: ListDeliveriesQuery,
  { team }: TeamScope = {},
): Promise<DeliveryPage | null> {
  if (!isWebhookId(webhookId)) return null;
  const owned = team === undefined ? {} : { team };
  try {
    const rows = await prisma.webhookDelivery.findMany({
      where: {
        subscriptionId: webhookId,
        ...(team === undefined ? {} : { subscription: owned }),
        ...(after === undefined ? {} : { id: { gt: after } }),
        ...(status === undefined ? {} : { status }),
      },
      orderBy: { id: 'asc' },
      take: limit + 1,
      select: deliveryRecordSelect,
    });
    // A delivery proves its subscription exists (deleting one deletes its deliveries); only
    // an empty page needs to ask.
    if (rows.length === 0) {
      const webhook = await prisma.webhookSubscription.findFirst({
        where: { id: webhookId, ...owned },
        select: { id: true },
      });
      if (webhook === null) return null;
    }
    return { deliveries: rows.slice(0, limit).map(toDeliveryRecord), hasMore: rows.length > limit };
  } catch (error) {
    throw translateError(error);
  }
}

/**
 * Re-queues one of a subscription's deliveries, whatever its status, to be attempted now:
 * pending, due now (database time), not delivered, and its lease cleared, so that a
 * dispatcher still busy with it finds the lease gone and records nothing (the resend is the
 * attempt that counts). The attempt count and the attempts are kept: a resent delivery that had
 * used its whole retry schedule gets one more attempt, then fails again; one still in its
 * schedule goes on from where it was. Recorded in the audit log by the same statement. Null when
 * the subscription (of `team`, when given) has no such delivery.
 */
export async function resendDelivery(
  prisma: PrismaClient,
  webhookId: string,
  deliveryId: bigint,
  { team, actor }: TeamScope & { readonly actor: AuditActor },
): Promise<DeliveryRecord | null> {
  if (!isWebhookId(webhookId)) return null;
  try {
    const resent = await prisma.$queryRaw<{ id: string }[]>`WITH owner AS (
  SELECT id, team FROM public.webhook_subscriptions
  WHERE id = ${webhookId}::uuid AND (${team ?? null}::varchar IS NULL OR team = ${team ?? null}::varchar)
), resent AS (
  UPDATE public.webhook_deliveries AS deliveries
  SET status = 'pending', next_attempt_at = now(), delivered_at = NULL, locked_until = NULL, lease_id = NULL
  FROM owner
  WHERE deliveries.id = ${deliveryId.toString()}::bigint AND deliveries.subscription_id = owner.id
  RETURNING deliveries.id::text AS id, owner.team
), audited AS (
  INSERT INTO public.audit_events (${AUDIT_COLUMNS})
  SELECT resent.team, ${auditValues(actor, 'webhook.delivery_resent', Prisma.sql`resent.id`, { webhookId })} FROM resent
)
SELECT id FROM resent`;
    if (resent.length === 0) return null;
    const row = await prisma.webhookDelivery.findFirst({
      where: { id: deliveryId, subscriptionId: webhookId },
      select: deliveryRecordSelect,
    });
    // Deleted (with its subscription) in between.
    return row === null ? null : toDeliveryRecord(row);
  } catch (error) {
    throw translateError(error);
  }
}

export function toDeliveryRecord(row: DeliveryRow): DeliveryRecord {
  return {
    id: row.id,
    webhookId: row.subscriptionId,
    eventId: row.eventId,
    eventType: row.event.type,
    plantId: row.event.plantId,
    status: toDeliveryStatus(row.status),
    nextAttemptAt: row.nextAttemptAt,
    createdAt: row.createdAt,
    deliveredAt: row.deliveredAt,
    attempts: row.attempts,
  };
}

const DELIVERY_STATUSES: ReadonlySet<string> = new Set<DeliveryStatus>(['pending', 'delivered', 'failed']);

/** The column's check constraint allows only these; anything else is a bug worth a loud 500. */
export function toDeliveryStatus(status: string): DeliveryStatus {
  if (!DELIVERY_STATUSES.has(status)) throw new Error(`unknown webhook delivery status ${JSON.stringify(status)}`);
  return status as DeliveryStatus;
}
