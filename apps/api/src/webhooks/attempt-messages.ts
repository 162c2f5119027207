/**
 * The errors a delivery attempt records, as operators read them in the delivery log. Apart from
 * the HTTP client (safe-http.ts) so that the OpenAPI document's examples can quote them without
 * loading it.
 */

/** What an attempt answered with `statusCode` records as its error: null for a 2xx. */
export function describeStatus(statusCode: number): string | null {
  if (statusCode >= 200 && statusCode < 300) return null;
  if (statusCode >= 300 && statusCode < 400) return `HTTP ${statusCode} (redirects are not followed)`;
  return `HTTP ${statusCode}`;
}

/** What an attempt that got no answer within its deadline records as its error. */
export function describeTimeout(timeoutMs: number): string {
  return `timed out after ${formatDuration(timeoutMs)}`;
}

function formatDuration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
