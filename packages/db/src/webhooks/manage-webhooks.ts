import type { PrismaClient } from '../generated/prisma/client.js';
import { translateError } from '../prisma-errors.js';
import { isWebhookId } from './webhook-id.js';
import type { WebhookRecord } from './webhook-records.js';

/** Every subscription in creation order (the id orders ties), never a secret. */
export async function listWebhooks(prisma: PrismaClient): Promise<WebhookRecord[]> {
  try {
    return await prisma.webhookSubscription.findMany({
      select: { id: true, url: true, description: true, createdAt: true },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
  } catch (error) {
    throw translateError(error);
  }
}

/**
 * Deletes a subscription, and with it (foreign-key cascade, same statement) its deliveries and
 * their attempts, pending ones included: nothing more is sent to it. A dispatcher in the middle
 * of one of them finds its lease gone (recordAttempt answers false). Its events stay (see the
 * WebhookEvent model). False when there was none.
 */
export async function deleteWebhook(prisma: PrismaClient, id: string): Promise<boolean> {
  if (!isWebhookId(id)) return false;
  try {
    const { count } = await prisma.webhookSubscription.deleteMany({ where: { id } });
    return count > 0;
  } catch (error) {
    throw translateError(error);
  }
}
