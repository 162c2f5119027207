/**
 * The receiver a webhook URL names, for fairness between receivers: its scheme, host and port
 * as written, lowercase, without the scheme's default port (`https://Hooks.example:443/a` and
 * `https://hooks.example/b` are one receiver). A URL the service accepted is absolute http(s)
 * without credentials, so this is everything before the path. Two spellings of one host (a name
 * and its address, punycode and Unicode) count as two receivers.
 *
 * The database computes the same (the function `webhook_receiver_origin` of the migration
 * 20261126111900_add_webhook_receivers) into each subscription's `receiver` column, which the
 * fan-out copies to its deliveries and the claim statement scans by; a test holds the two
 * together on both engines.
 */
export function receiverOrigin(url: string): string {
  const authority = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(url)?.[0] ?? url;
  return authority.toLowerCase().replace(/^(http:\/\/[^/]*):80$|^(https:\/\/[^/]*):443$/, '$1$2');
}
