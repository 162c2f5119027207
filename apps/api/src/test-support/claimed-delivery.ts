import { randomBytes } from 'node:crypto';
import type { ClaimedDelivery } from '@plant-store/db';

let nextId = 1n;

/**
 * A claim as the store hands it out, for the dispatcher's unit tests: a fresh delivery id and lease,
 * the first attempt, a valid secret; `overrides` sets what a test is about.
 */
export function claimedDelivery(overrides: Partial<ClaimedDelivery> = {}): ClaimedDelivery {
  const deliveryId = nextId++;
  return {
    deliveryId,
    leaseId: `lease-${deliveryId}`,
    leaseExpiresAt: new Date(Date.now() + 60_000),
    eventId: `msg_${deliveryId}`,
    webhookId: 'webhook-1',
    team: 'default',
    url: 'http://127.0.0.1:9/hook',
    secrets: [`whsec_${randomBytes(32).toString('base64')}`],
    payload: `{"id":${deliveryId},"name":"Monstera"}`,
    traceParent: null,
    attemptNumber: 1,
    ...overrides,
  };
}
