/** A UUID as PostgreSQL writes it (any case): anything else names no webhook. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Whether `id` can be a webhook's id. Checked before a query: PostgreSQL refuses to compare
 * a malformed UUID (an error, not "no row"), and an id from a URL is whatever the client sent.
 */
export function isWebhookId(id: string): boolean {
  return UUID.test(id);
}
