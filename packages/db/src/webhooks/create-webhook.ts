import { randomBytes } from 'node:crypto';
import { WEBHOOK_LIMIT } from '@plant-store/schema';
import { WebhookLimitError } from '../errors.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { translateError } from '../prisma-errors.js';
import type { CreatedWebhook } from './webhook-records.js';

// The limit is part of the contract (the OpenAPI document states it): declared in the schema package.
export { WEBHOOK_LIMIT };

/**
 * The transaction-scoped advisory lock that serialises webhook creation across replicas, so
 * that concurrent creates cannot pass the limit together ("pswebhk" in ASCII; any constant
 * no other code of this database locks will do).
 */
const CREATE_WEBHOOK_LOCK = 0x70_73_77_65_62_68_6bn;

export interface NewWebhookInput {
  readonly url: string;
  readonly description?: string;
}

/** The Standard Webhooks secret format: `whsec_` and the base64 of 32 random bytes. */
function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

interface CreatedRow {
  readonly id: string;
  readonly url: string;
  readonly description: string | null;
  readonly createdAt: Date;
}

/**
 * Registers a subscription, unless WEBHOOK_LIMIT exist already (WebhookLimitError). The count
 * and the insert run after the lock, each statement on a fresh snapshot (READ COMMITTED): the
 * count sees every create that went before, committed, on any replica.
 */
export async function createWebhook(prisma: PrismaClient, input: NewWebhookInput): Promise<CreatedWebhook> {
  const secret = generateWebhookSecret();
  const description = input.description ?? null;
  let rows: CreatedRow[];
  try {
    [, rows] = await prisma.$transaction([
      prisma.$executeRaw`SELECT pg_advisory_xact_lock(${CREATE_WEBHOOK_LOCK}::bigint)`,
      prisma.$queryRaw<CreatedRow[]>`
        INSERT INTO public.webhook_subscriptions (url, description, secret)
        SELECT ${input.url}::text, ${description}::text, ${secret}::text
        WHERE (SELECT count(*) FROM public.webhook_subscriptions) < ${WEBHOOK_LIMIT}
        RETURNING id::text AS id, url, description, created_at AS "createdAt"`,
    ]);
  } catch (error) {
    throw translateError(error);
  }
  const [row] = rows;
  if (row === undefined) throw new WebhookLimitError(WEBHOOK_LIMIT);
  return { id: row.id, url: row.url, description: row.description, createdAt: row.createdAt, secret };
}
