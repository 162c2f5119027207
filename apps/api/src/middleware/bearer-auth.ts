import type { AuthenticatedToken } from '@plant-store/db';
import { ErrorCode, type Scope } from '@plant-store/schema';
import type { Middleware } from 'koa';
import type { AuthFailureLimiter } from '../auth/auth-failure-limiter.js';
import { clientAddress } from '../auth/client-address.js';
import { ApiError, type ErrorAnswer } from '../http/api-error.js';
import type { AppContext, AppState } from '../http/app-state.js';
import { type Caller, PLATFORM_ADMIN_SCOPE } from '../http/caller.js';
import { respondError } from './handle-errors.js';

/** What `token create` grants when no `--scope` is given: the plant scopes, not `webhooks:manage`. */
export const DEFAULT_TOKEN_SCOPES: readonly Scope[] = ['plants:read', 'plants:write'];

export const REALM = 'Bearer realm="plant-store"';
export const AUTHENTICATION_REQUIRED_MESSAGE = 'authentication required: send Authorization: Bearer <token>';
export const MISSING_SCHEME_MESSAGE =
  'the Authorization header lacks the Bearer scheme: send Authorization: Bearer <token>';
export const INVALID_TOKEN_MESSAGE = 'the bearer token is invalid or has been revoked';
export const EXPIRED_TOKEN_MESSAGE = 'the bearer token has expired';

export function tooManyFailuresMessage(retryAfterSeconds: number): string {
  return `too many failed authentications from this address; retry after ${retryAfterSeconds} s`;
}

export function missingScopeMessage(scope: string): string {
  return `this token lacks the ${scope} scope`;
}
/** RFC 6750 b64token; anything longer than this is no token we issued. */
const BEARER_CREDENTIAL = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
/** The scheme word, in any case (RFC 9110 11.1), followed by a space or nothing. */
const BEARER_SCHEME = /^Bearer(?: |$)/i;
const MAX_TOKEN_LENGTH = 512;

export type AuthenticateToken = (token: string) => Promise<AuthenticatedToken | null>;

export interface BearerAuthOptions {
  /** The token's record, null when unknown or revoked (an expired one's too: judged here). */
  readonly authenticate: AuthenticateToken;
  /** Called for every request a valid token authenticates: its last-used time (written in batches). */
  readonly recordUse?: (tokenId: string) => void;
  /** The limit on failed authentications per client address; absent: none (unit tests). */
  readonly failures?: FailedAuthenticationLimit | undefined;
  /** Proxies in front of the service whose X-Forwarded-For entries are trusted (see clientAddress). Default 0. */
  readonly trustedProxyHops?: number | undefined;
}

export interface FailedAuthenticationLimit {
  readonly limiter: AuthFailureLimiter;
  /**
   * Whether `token` is an active token this process knows (no query: every replica holds every
   * active token, see the db package's token directory): such a token is still looked up for an
   * address over its limit, so that a shared address (NAT, a proxy) does not lock out the teams
   * whose tokens work.
   */
  readonly knows: (token: string) => boolean;
  /** An address has just used up its budget (once per window): a log line. */
  readonly onBlocked?: (address: string) => void;
}

/** The bearer token in an Authorization header value, or null when it is not a bearer credential. */
export function parseBearerToken(header: string): string | null {
  const token = BEARER_CREDENTIAL.exec(header)?.[1];
  return token !== undefined && token.length <= MAX_TOKEN_LENGTH ? token : null;
}

/** Whether a token that expires at `expiresAt` no longer authenticates at `now` (ms since the epoch). */
export function hasExpired(token: Pick<AuthenticatedToken, 'expiresAt'>, now: number): boolean {
  return token.expiresAt !== null && token.expiresAt.getTime() <= now;
}

/** A 401's answer, made once: the refusals below are answered, not thrown (see bearerAuth). */
function unauthenticated(message: string, challenge: string): ErrorAnswer {
  return {
    code: ErrorCode.NotAuthenticated,
    status: ErrorCode.NotAuthenticated,
    headers: { 'WWW-Authenticate': challenge },
    message,
  };
}

const AUTHENTICATION_REQUIRED = unauthenticated(AUTHENTICATION_REQUIRED_MESSAGE, REALM);
const MISSING_SCHEME = unauthenticated(MISSING_SCHEME_MESSAGE, REALM);
const INVALID_TOKEN = unauthenticated(INVALID_TOKEN_MESSAGE, `${REALM}, error="invalid_token"`);
const EXPIRED_TOKEN = unauthenticated(EXPIRED_TOKEN_MESSAGE, `${REALM}, error="invalid_token"`);

/**
 * Requires a valid bearer token carrying `scope`, and every scope of `alsoRequires` (RFC 6750).
 * Runs before the body is read, so an unauthenticated caller learns nothing about validation.
 * Expiry is judged against the clock on every request, cached records included: an expired token
 * fails at once on every replica. Sets `ctx.state.caller` for the handler.
 */
export function bearerAuth(
  { authenticate, recordUse, failures, trustedProxyHops = 0 }: BearerAuthOptions,
  scope: Scope,
  alsoRequires: readonly Scope[] = [],
): Middleware<AppState> {
  const required = [scope, ...alsoRequires];
  return async (ctx, next) => {
    const header = ctx.req.headers.authorization ?? '';
    // The 401s are answered here, not thrown to the error middleware: an error made and thrown
    // back through every middleware frame (a rejected promise at each) cost more than the answer.
    if (header === '') return respondError(ctx, AUTHENTICATION_REQUIRED);
    // RFC 6750 3.1: a request without a Bearer credential (no scheme word, another scheme) gets
    // the bare challenge, no error code; the message says what is missing, never echoing the header.
    if (!BEARER_SCHEME.test(header)) return respondError(ctx, MISSING_SCHEME);
    const token = parseBearerToken(header);
    // An address over its failure budget gets no lookup (no query) for a token this process has not
    // seen authenticate: a flood of made-up tokens costs a hash and a map lookup each, not a query.
    if (failures !== undefined) refuseOverLimit(ctx, failures, trustedProxyHops, token);
    const record = token === null ? null : await authenticate(token);
    if (record === null || hasExpired(record, Date.now())) {
      if (failures !== undefined) countFailure(ctx, failures, trustedProxyHops);
      return respondError(ctx, record === null ? INVALID_TOKEN : EXPIRED_TOKEN);
    }
    // Named in the access line and the metrics from here on, whatever the answer.
    ctx.state.token = record;
    recordUse?.(record.id);
    for (const needed of required) {
      if (!record.scopes.includes(needed)) {
        throw new ApiError(ErrorCode.NotAllowed, missingScopeMessage(needed), {
          headers: { 'WWW-Authenticate': `${REALM}, error="insufficient_scope", scope="${required.join(' ')}"` },
        });
      }
    }
    ctx.state.caller = new RequestCaller(record, ctx, trustedProxyHops);
    await next();
  };
}

/** The 429 for an address over its failure budget, unless the token is one this process knows. */
function refuseOverLimit(
  ctx: AppContext,
  failures: FailedAuthenticationLimit,
  trustedProxyHops: number,
  token: string | null,
): void {
  // Nothing remembered (the usual case): no address to work out.
  if (failures.limiter.size() === 0) return;
  const blockedForMs = failures.limiter.blockedForMs(clientAddress(ctx, trustedProxyHops));
  if (blockedForMs === 0 || (token !== null && failures.knows(token))) return;
  const retryAfter = Math.max(1, Math.ceil(blockedForMs / 1000));
  throw new ApiError(ErrorCode.TooManyRequests, tooManyFailuresMessage(retryAfter), {
    headers: { 'Retry-After': String(retryAfter) },
  });
}

function countFailure(ctx: AppContext, failures: FailedAuthenticationLimit, trustedProxyHops: number): void {
  const address = clientAddress(ctx, trustedProxyHops);
  if (failures.limiter.recordFailure(address)) failures.onBlocked?.(address);
}

/**
 * The caller of one request. The client's address is worked out when asked (an audited action),
 * not on every request, by a getter on the class. A getter in an object literal made per request
 * (as it was) kept every request's objects alive through young-generation collections, to be
 * freed only by full ones: under load 8 MB was promoted at each scavenge, and a rejected request
 * cost about 40% more CPU, mostly in the garbage collector.
 */
class RequestCaller implements Caller {
  readonly admin: boolean;

  constructor(
    readonly token: AuthenticatedToken,
    private readonly ctx: AppContext,
    private readonly trustedProxyHops: number,
  ) {
    this.admin = token.scopes.includes(PLATFORM_ADMIN_SCOPE);
  }

  get clientAddress(): string {
    return clientAddress(this.ctx, this.trustedProxyHops);
  }
}
