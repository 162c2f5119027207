import type { AuditActor } from '../audit/audit-records.js';
import { AUDIT_COLUMNS, auditValues } from '../audit/audit-sql.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { translateError } from '../prisma-errors.js';
import type { TeamScope } from './manage-webhooks.js';
import { isWebhookId } from './webhook-id.js';
import type { DeliveryStatus } from './webhook-records.js';

/** Which of a subscription's deliveries to queue again: each bound applies when given. */
export interface ResendDeliveriesInput {
  readonly status: DeliveryStatus;
  /** Ids greater than this one. */
  readonly after?: bigint;
  /** Ids at most this one. */
  readonly through?: bigint;
  /** Created at or after this instant. */
  readonly createdFrom?: Date;
  /** Created before this instant. */
  readonly createdBefore?: Date;
  /** At most this many, oldest first. */
  readonly limit: number;
}

export interface ResentDeliveries {
  /** The ids queued again, ascending. */
  readonly deliveryIds: bigint[];
  /** Whether more deliveries matched than `limit`. */
  readonly hasMore: boolean;
}

/**
 * Re-queues, oldest first, up to `limit` of a subscription's deliveries that match, each as
 * resendDelivery does (pending, due now, lease cleared, attempts kept) and each recorded in the
 * audit log, all in one statement: either every one is queued and audited or none. Reads
 * `limit + 1` matching rows along the (subscription_id, id) index to know whether more follow.
 * Null when there is no such subscription (of `team`, when given).
 */
export async function resendDeliveries(
  prisma: PrismaClient,
  webhookId: string,
  input: ResendDeliveriesInput,
  { team, actor }: TeamScope & { readonly actor: AuditActor },
): Promise<ResentDeliveries | null> {
  if (!isWebhookId(webhookId)) return null;
  const { status, after, through, createdFrom, createdBefore, limit } = input;
  try {
    const rows = await prisma.$queryRaw<
      { kind: 'owner' | 'resent'; id: string | null; matched: number }[]
    >`WITH owner AS (
  SELECT id, team FROM public.webhook_subscriptions
  WHERE id = ${webhookId}::uuid AND (${team ?? null}::varchar IS NULL OR team = ${team ?? null}::varchar)
), matching AS (
  SELECT deliveries.id, row_number() OVER (ORDER BY deliveries.id) AS position
  FROM public.webhook_deliveries AS deliveries JOIN owner ON deliveries.subscription_id = owner.id
  WHERE deliveries.status = ${status}::text
    AND (${after?.toString() ?? null}::bigint IS NULL OR deliveries.id > ${after?.toString() ?? null}::bigint)
    AND (${through?.toString() ?? null}::bigint IS NULL OR deliveries.id <= ${through?.toString() ?? null}::bigint)
    AND (${createdFrom ?? null}::timestamptz IS NULL OR deliveries.created_at >= ${createdFrom ?? null}::timestamptz)
    AND (${createdBefore ?? null}::timestamptz IS NULL OR deliveries.created_at < ${createdBefore ?? null}::timestamptz)
  ORDER BY deliveries.id
  LIMIT ${limit + 1}
), resent AS (
  UPDATE public.webhook_deliveries AS deliveries
  SET status = 'pending', next_attempt_at = now(), delivered_at = NULL, locked_until = NULL, lease_id = NULL
  FROM matching, owner
  WHERE deliveries.id = matching.id AND matching.position <= ${limit}
  RETURNING deliveries.id, owner.team
), audited AS (
  INSERT INTO public.audit_events (${AUDIT_COLUMNS})
  SELECT resent.team, ${auditValues(actor, 'webhook.delivery_resent', Prisma.sql`resent.id`, { webhookId })} FROM resent
)
SELECT 'owner' AS kind, NULL::text AS id, (SELECT count(*)::int FROM matching) AS matched FROM owner
UNION ALL
SELECT 'resent', id::text, 0 FROM resent`;
    // No owner row: no such subscription (for this team).
    const owner = rows.find((row) => row.kind === 'owner');
    if (owner === undefined) return null;
    const deliveryIds = rows
      .filter((row) => row.kind === 'resent' && row.id !== null)
      .map((row) => BigInt(row.id ?? ''))
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return { deliveryIds, hasMore: owner.matched > limit };
  } catch (error) {
    throw translateError(error);
  }
}
