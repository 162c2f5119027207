import type { AuditActor } from '../audit/audit-records.js';
import { AUDIT_COLUMNS, auditValues } from '../audit/audit-sql.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { translateError } from '../prisma-errors.js';
import { isWebhookId } from './webhook-id.js';
import { WEBHOOK_RECORD_COLUMNS } from './webhook-record-columns.js';
import type { WebhookRecord } from './webhook-records.js';

/** Whose subscriptions a call may see: one team's, or (absent) every team's (platform:admin). */
export interface TeamScope {
  readonly team?: string | undefined;
}

/** The subscriptions of one team, or of every team, in creation order (the id orders ties), never a secret. */
export async function listWebhooks(prisma: PrismaClient, { team }: TeamScope = {}): Promise<WebhookRecord[]> {
  try {
    return await prisma.$queryRaw<WebhookRecord[]>`SELECT ${WEBHOOK_RECORD_COLUMNS}
FROM public.webhook_subscriptions
WHERE ${team ?? null}::varchar IS NULL OR team = ${team ?? null}::varchar
ORDER BY created_at, id`;
  } catch (error) {
    throw translateError(error);
  }
}

/**
 * Deletes a subscription (of `team`, when given: another team's is left alone, as if it did not
 * exist), and with it (foreign-key cascade, same statement) its deliveries and their attempts,
 * pending ones included: nothing more is sent to it. A dispatcher in the middle of one of them
 * finds its lease gone (recordAttempt answers false). Its events stay (see the WebhookEvent
 * model). Recorded in the audit log by the same statement. False when there was none.
 */
export async function deleteWebhook(
  prisma: PrismaClient,
  id: string,
  { team, actor }: TeamScope & { readonly actor: AuditActor },
): Promise<boolean> {
  if (!isWebhookId(id)) return false;
  try {
    const rows = await prisma.$queryRaw<{ id: string }[]>`WITH deleted AS (
  DELETE FROM public.webhook_subscriptions
  WHERE id = ${id}::uuid AND (${team ?? null}::varchar IS NULL OR team = ${team ?? null}::varchar)
  RETURNING id::text AS id, team, url
), audited AS (
  INSERT INTO public.audit_events (${AUDIT_COLUMNS})
  SELECT deleted.team, ${auditValues(actor, 'webhook.deleted', Prisma.sql`deleted.id`, null)} FROM deleted
)
SELECT id FROM deleted`;
    return rows.length > 0;
  } catch (error) {
    throw translateError(error);
  }
}
