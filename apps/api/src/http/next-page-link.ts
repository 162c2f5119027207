/**
 * RFC 8288 `Link` to the next page of a listing, as a query-only reference
 * (`<?limit=20&after=5>; rel="next"`): it resolves against the request's own URL (RFC 3986
 * section 5), so it depends neither on the Host header (which a client or proxy controls) nor on
 * the path prefix a proxy may strip. `query` is the next page's, in the order written.
 */
export function nextPageLink(query: Readonly<Record<string, string>>): string {
  // URLSearchParams percent-encodes everything but [A-Za-z0-9*-._]: the target needs no escaping.
  return `<?${new URLSearchParams(query)}>; rel="next"`;
}
