import { Webhook } from 'standardwebhooks';

/** Sent with every webhook; the `/1` moves should the payload or headers ever change shape. */
export const WEBHOOK_USER_AGENT = 'plant-store-webhooks/1';

/**
 * The headers of one delivery attempt, signed the Standard Webhooks way: HMAC-SHA256 over
 * `<webhook-id>.<webhook-timestamp>.<body>` with each of the subscription's secrets (the current
 * one, and during a rotation's grace period the previous one too), space-separated `v1,`
 * signatures as the specification allows: a receiver verifying with either secret accepts it.
 * Called afresh for every attempt: the id stays (receivers deduplicate on it), the timestamp is
 * the attempt's own, so a retry hours later is not refused as a replay (receivers allow about five
 * minutes of skew).
 */
export function signWebhook(
  secrets: readonly string[],
  eventId: string,
  payload: string,
  at: Date,
): Record<string, string> {
  if (secrets.length === 0) throw new Error('a webhook needs a secret to be signed');
  return {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    'webhook-id': eventId,
    // What the library signs: whole seconds, rounded down. The same Date goes into both.
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(eventId, at, payload)).join(' '),
  };
}
