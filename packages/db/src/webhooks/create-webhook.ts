import { randomBytes } from 'node:crypto';
import { DEFAULT_WEBHOOK_EVENT_TYPES, WEBHOOK_LIMIT } from '@plant-store/schema';
import type { AuditActor } from '../audit/audit-records.js';
import { AUDIT_COLUMNS, auditValues } from '../audit/audit-sql.js';
import { WebhookLimitError } from '../errors.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { translateError } from '../prisma-errors.js';
import { WEBHOOK_RECORD_COLUMNS } from './webhook-record-columns.js';
import type { CreatedWebhook } from './webhook-records.js';

// The default cap is part of the contract (the OpenAPI document states it): declared in the schema package.
export { WEBHOOK_LIMIT };

/**
 * The transaction-scoped advisory lock class that serialises one team's webhook creation across
 * replicas (the second key is the team's hash), so that concurrent creates cannot pass the team's
 * cap together ("pswh" in ASCII; any constant no other code of this database locks will do).
 */
const CREATE_WEBHOOK_LOCK_CLASS = 0x70_73_77_68;

export interface NewWebhookInput {
  readonly url: string;
  readonly description?: string;
  /** The event types it receives; absent: `['plant.created']` (the NewPlant body, as always). */
  readonly eventTypes?: readonly string[] | undefined;
  /** The team that owns it: only that team (and platform:admin) sees and manages it. */
  readonly team: string;
  /** Most subscriptions its team may hold, this one included. */
  readonly teamLimit: number;
  /** Who creates it: recorded in the audit log, in the same transaction. */
  readonly actor: AuditActor;
}

/** The Standard Webhooks secret format: `whsec_` and the base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

type CreatedRow = Omit<CreatedWebhook, 'secret'>;

/**
 * Registers a subscription for its team, unless the team holds `teamLimit` already
 * (WebhookLimitError), and records it in the audit log by the same statement. The count and the
 * insert run after the team's lock, each statement on a fresh snapshot (READ COMMITTED): the count
 * sees every create of the team that went before, committed, on any replica.
 */
export async function createWebhook(prisma: PrismaClient, input: NewWebhookInput): Promise<CreatedWebhook> {
  const secret = generateWebhookSecret();
  const description = input.description ?? null;
  const { team, actor } = input;
  const eventTypes = [...(input.eventTypes ?? DEFAULT_WEBHOOK_EVENT_TYPES)];
  let rows: CreatedRow[];
  try {
    [, rows] = await prisma.$transaction([
      prisma.$executeRaw`SELECT pg_advisory_xact_lock(${CREATE_WEBHOOK_LOCK_CLASS}::int, hashtext(${team}::text))`,
      prisma.$queryRaw<CreatedRow[]>`WITH created AS (
  INSERT INTO public.webhook_subscriptions (url, description, secret, team, event_types)
  SELECT ${input.url}::text, ${description}::text, ${secret}::text, ${team}::varchar, ${eventTypes}::text[]
  WHERE (SELECT count(*) FROM public.webhook_subscriptions WHERE team = ${team}::varchar) < ${input.teamLimit}::int
  RETURNING ${WEBHOOK_RECORD_COLUMNS}
), audited AS (
  INSERT INTO public.audit_events (${AUDIT_COLUMNS})
  SELECT created.team, ${auditValues(actor, 'webhook.created', Prisma.sql`created.id`, { url: input.url, eventTypes })} FROM created
)
SELECT * FROM created`,
    ]);
  } catch (error) {
    throw translateError(error);
  }
  const [row] = rows;
  if (row === undefined) throw new WebhookLimitError(input.teamLimit, team);
  return { ...row, secret };
}
