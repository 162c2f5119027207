import type { ClaimedDelivery } from '@plant-store/db';

/** What a log line says of a delivery: ids only, never the secret, payload or signature. */
export function describeClaim(claimed: ClaimedDelivery) {
  return {
    webhookId: claimed.webhookId,
    eventId: claimed.eventId,
    deliveryId: claimed.deliveryId.toString(),
    attempt: claimed.attemptNumber,
  };
}
