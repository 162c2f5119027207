import net from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { Agent, buildConnector, type Dispatcher, request } from 'undici';
import { describeStatus, describeTimeout } from './attempt-messages.js';
import { createExcerptCollector } from './response-excerpt.js';
import {
  ALLOW_PRIVATE_NETWORKS_SETTING,
  bareHostname,
  checkAddress,
  type ResolveHost,
  resolveWithSystem,
} from './url-policy.js';

/**
 * Outgoing webhook requests, with the address check done where it cannot be dodged: at connect.
 *
 * Each new connection resolves the host once, checks every address it got, and dials the checked
 * address itself, so a name that resolved to a public address at registration (or a moment ago)
 * and to 127.0.0.1 now (DNS rebinding) is refused. A literal IP is checked as such: net.connect
 * never calls a lookup hook for one. For https the TLS server name stays the host name, so
 * certificate checks and SNI work as usual. undici's own `request` is used, not the global fetch:
 * Node's built-in fetch is the runtime's own bundled undici (7.x in Node 24), whose dispatchers do
 * not mix with this package's (8.x).
 */

export interface SafeAgentOptions {
  readonly allowPrivateNetworks: boolean;
  /** Bounds connecting (TCP and TLS), waiting for headers and each pause in the body. */
  readonly timeoutMs: number;
  /** Default: the system resolver. Tests pass their own. */
  readonly resolve?: ResolveHost;
  /** Certificate authorities to trust instead of the system's (tests: their own). */
  readonly ca?: ConnectionOptions['ca'];
}

/** Set on the error a refused address fails the connection with. */
const ADDRESS_NOT_ALLOWED = 'ERR_WEBHOOK_ADDRESS_NOT_ALLOWED';

class AddressNotAllowedError extends Error {
  override readonly name = 'AddressNotAllowedError';
  readonly code = ADDRESS_NOT_ALLOWED;
}

class HostNotResolvedError extends Error {
  override readonly name = 'HostNotResolvedError';
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

export function createSafeAgent({
  allowPrivateNetworks,
  timeoutMs,
  resolve = resolveWithSystem,
  ca,
}: SafeAgentOptions): Agent {
  const connectChecked = buildConnector({ timeout: timeoutMs, ...(ca === undefined ? {} : { ca }) });
  return new Agent({
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connect(options, callback) {
      const host = options.hostname.replace(/^\[(.*)\]$/, '$1');
      const literal = net.isIP(host) !== 0;
      const lookup = literal
        ? Promise.resolve([{ address: host }])
        : resolve(host).then(
            (addresses) => addresses,
            (error: unknown) => {
              const code = error instanceof Error && 'code' in error ? String(error.code) : 'ENOTFOUND';
              throw new HostNotResolvedError(`DNS lookup of ${host} failed (${code})`, code);
            },
          );
      lookup
        .then((addresses) => {
          const checks = addresses.map(({ address }) => checkAddress(address, allowPrivateNetworks));
          const refused = checks.find((check) => !check.allowed);
          if (refused) {
            // The delivery log is shown to clients: a name's addresses are not told (see url-policy.ts).
            const what = literal
              ? `address not allowed (${refused.range} ${refused.address})`
              : 'a resolved address is not allowed (not public)';
            throw new AddressNotAllowedError(
              `${what}; set ${ALLOW_PRIVATE_NETWORKS_SETTING}=true for receivers on private networks`,
            );
          }
          // The first address, in the resolver's order (what net.connect would have tried first).
          const dial = checks[0];
          if (dial === undefined) throw new HostNotResolvedError(`DNS lookup of ${host} found no address`, 'ENODATA');
          connectChecked({ ...options, hostname: dial.address, ...(literal ? {} : { servername: host }) }, callback);
        })
        .catch((error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), null));
    },
  });
}

export interface PostWebhookOptions {
  /** The whole attempt's deadline: connecting, sending, the response headers and the body read. */
  readonly timeoutMs: number;
  /** How much of the response body is read before the connection is dropped. Default 4096. */
  readonly maxResponseBytes?: number;
  /** Aborts the attempt early (shutdown). */
  readonly signal?: AbortSignal;
}

export interface PostWebhookResult {
  /** The receiver's status; null when no response came. */
  readonly statusCode: number | null;
  readonly latencyMs: number;
  /** Why the attempt failed, briefly; null for a 2xx. */
  readonly error: string | null;
  /**
   * When no response came, what kind of failure it was, from a small fixed set (`timeout`,
   * `aborted`, `invalid_url`, an error code such as `ECONNREFUSED`): a trace's `error.type`.
   */
  readonly errorType?: string;
  /** The start of the answer's body as text (see responseExcerptOf); null or absent when none came. */
  readonly responseExcerpt?: string | null;
}

export const DEFAULT_MAX_RESPONSE_BYTES = 4096;

/** The highest status HTTP defines (RFC 9110 section 15): what an attempt may record. */
const MAX_HTTP_STATUS = 599;

/**
 * POSTs one webhook and says how it went; never throws. Redirects are not followed (a 3xx is a
 * failed attempt, as the Standard Webhooks spec says): following one would let a receiver point
 * the request anywhere. At most `maxResponseBytes` of the body are read, then the connection is
 * dropped: only its first bytes are kept (the attempt's response excerpt), and a receiver must not
 * be able to make us read without end.
 */
export async function postWebhook(
  dispatcher: Dispatcher,
  url: string,
  body: string,
  headers: Readonly<Record<string, string>>,
  { timeoutMs, maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES, signal }: PostWebhookOptions,
): Promise<PostWebhookResult> {
  const started = performance.now();
  const latencyMs = () => Math.round(performance.now() - started);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { statusCode: null, latencyMs: latencyMs(), error: 'invalid URL', errorType: 'invalid_url' };
  }
  if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.username || parsed.password) {
    return { statusCode: null, latencyMs: latencyMs(), error: 'URL not allowed', errorType: 'url_not_allowed' };
  }
  if (bareHostname(parsed) === '') {
    return { statusCode: null, latencyMs: latencyMs(), error: 'invalid URL', errorType: 'invalid_url' };
  }

  const attempt = attemptSignal(timeoutMs, signal);
  try {
    let response: Dispatcher.ResponseData;
    try {
      response = await request(parsed, { method: 'POST', dispatcher, body, headers, signal: attempt.signal });
    } catch (error) {
      const reason = attempt.timedOut()
        ? describeTimeout(timeoutMs)
        : signal?.aborted
          ? 'aborted'
          : describeFailure(error, timeoutMs);
      const errorType = attempt.timedOut() ? 'timeout' : signal?.aborted ? 'aborted' : classifyFailure(error);
      return { statusCode: null, latencyMs: latencyMs(), error: reason, errorType };
    }
    const excerpt = createExcerptCollector();
    await drainAtMost(response.body, maxResponseBytes, excerpt.add);
    const statusCode = response.statusCode;
    // undici passes on any three digits; HTTP statuses, and the delivery log's contract, end at 599.
    if (statusCode > MAX_HTTP_STATUS) {
      return {
        statusCode: null,
        latencyMs: latencyMs(),
        error: `invalid HTTP status ${statusCode}`,
        errorType: 'invalid_response',
      };
    }
    return { statusCode, latencyMs: latencyMs(), error: describeStatus(statusCode), responseExcerpt: excerpt.text() };
  } finally {
    attempt.dispose();
  }
}

/**
 * One attempt's abort signal: it fires at the deadline, or when `outer` (the dispatcher's
 * shutdown) aborts. Made by hand rather than with AbortSignal.timeout and AbortSignal.any:
 * AbortSignal.any leaves an entry on the long-lived `outer` for every signal it makes (Node 20
 * kept them for ever; Node 24 until a garbage collection finds the signal gone); and a timeout
 * signal's timer outlives a quick attempt by the whole deadline. dispose() takes both away.
 */
function attemptSignal(timeoutMs: number, outer: AbortSignal | undefined) {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError'));
  }, timeoutMs).unref();
  const onOuterAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) onOuterAbort();
  else outer?.addEventListener('abort', onOuterAbort, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    dispose(): void {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuterAbort);
    },
  };
}

/**
 * Reads up to `limit` bytes (each chunk shown to `keep`, which holds on to the start) and drops
 * the rest. A body that ends within the limit leaves the connection reusable; a longer one, or
 * one that fails or stalls past the deadline, closes it. The status already decided the outcome,
 * so what happens here changes nothing but the latency.
 */
async function drainAtMost(
  body: Dispatcher.ResponseData['body'],
  limit: number,
  keep: (chunk: Buffer) => void,
): Promise<void> {
  let read = 0;
  try {
    for await (const chunk of body) {
      keep(chunk as Buffer);
      read += (chunk as Buffer).length;
      if (read >= limit) break;
    }
  } catch {
    // Reset, aborted or timed out mid-body: the status stands.
  } finally {
    if (!body.destroyed) body.destroy();
  }
}

const UNDICI_TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const DNS_FAILURES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME', 'ENODATA']);
const NETWORK_FAILURES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  UND_ERR_SOCKET: 'connection closed by the receiver',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/** A failed request as a short reason: what an operator reads in the delivery's attempts. */
export function describeFailure(error: unknown, timeoutMs: number): string {
  const code = errorCode(error);
  if (code !== undefined && UNDICI_TIMEOUTS.has(code)) return describeTimeout(timeoutMs);
  if (!(error instanceof Error)) return 'request failed';
  if (code === ADDRESS_NOT_ALLOWED) return error.message;
  // undici asserts what its parser let through, such as a status below 100: the receiver's fault.
  if (code === 'ERR_ASSERTION') return 'invalid HTTP response';
  if (error instanceof HostNotResolvedError || (code !== undefined && DNS_FAILURES.has(code))) {
    return `DNS lookup failed (${code ?? 'ENOTFOUND'})`;
  }
  const network = code === undefined ? undefined : NETWORK_FAILURES[code];
  if (network !== undefined) return network;
  if (isTlsError(error, code)) return truncate(`TLS error: ${error.message}`);
  return truncate(`request failed: ${error.message}${code === undefined ? '' : ` (${code})`}`);
}

/** A failed request as a trace's `error.type`: its error code, else its error class. */
function classifyFailure(error: unknown): string {
  const code = errorCode(error);
  if (code !== undefined && UNDICI_TIMEOUTS.has(code)) return 'timeout';
  if (code === ADDRESS_NOT_ALLOWED) return 'address_not_allowed';
  if (code === 'ERR_ASSERTION') return 'invalid_response';
  if (code !== undefined) return code;
  return error instanceof Error ? error.name : '_OTHER';
}

function errorCode(error: unknown): string | undefined {
  if (!(error instanceof Error) || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

function isTlsError(error: Error, code: string | undefined): boolean {
  if (code !== undefined && /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|EPROTO$)/.test(code))
    return true;
  return /certificate|\bTLS\b|\bSSL\b/i.test(error.message);
}

function truncate(text: string, max = 200): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
