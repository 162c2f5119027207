import { Webhook } from 'standardwebhooks';

/** Sent with every webhook; the `/1` moves should the payload or headers ever change shape. */
export const WEBHOOK_USER_AGENT = 'plant-store-webhooks/1';

/**
 * The headers of one delivery attempt, signed the Standard Webhooks way: HMAC-SHA256 over
 * `<webhook-id>.<webhook-timestamp>.<body>` with the subscription's secret. Called afresh for
 * every attempt: the id stays (receivers deduplicate on it), the timestamp is the attempt's own,
 * so a retry hours later is not refused as a replay (receivers allow about five minutes of skew).
 */
export function signWebhook(secret: string, eventId: string, payload: string, at: Date): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    'webhook-id': eventId,
    // What the library signs: whole seconds, rounded down. The same Date goes into both.
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(eventId, at, payload),
  };
}
