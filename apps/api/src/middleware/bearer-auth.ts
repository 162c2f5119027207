import type { TokenRecord } from '@plant-store/db';
import { ErrorCode, type Scope } from '@plant-store/schema';
import type { Middleware } from 'koa';
import { ApiError } from '../http/api-error.js';
import type { AppState } from '../http/app-state.js';

/** What `token create` grants when no `--scope` is given: the plant scopes, not `webhooks:manage`. */
export const DEFAULT_TOKEN_SCOPES: readonly Scope[] = ['plants:read', 'plants:write'];

export const REALM = 'Bearer realm="plant-store"';
export const AUTHENTICATION_REQUIRED_MESSAGE = 'authentication required: send Authorization: Bearer <token>';
export const MISSING_SCHEME_MESSAGE =
  'the Authorization header lacks the Bearer scheme: send Authorization: Bearer <token>';
export const INVALID_TOKEN_MESSAGE = 'the bearer token is invalid or has been revoked';

export function missingScopeMessage(scope: string): string {
  return `this token lacks the ${scope} scope`;
}
/** RFC 6750 b64token; anything longer than this is no token we issued. */
const BEARER_CREDENTIAL = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
/** The scheme word, in any case (RFC 9110 11.1), followed by a space or nothing. */
const BEARER_SCHEME = /^Bearer(?: |$)/i;
const MAX_TOKEN_LENGTH = 512;

export type AuthenticateToken = (token: string) => Promise<TokenRecord | null>;

/** The bearer token in an Authorization header value, or null when it is not a bearer credential. */
export function parseBearerToken(header: string): string | null {
  const token = BEARER_CREDENTIAL.exec(header)?.[1];
  return token !== undefined && token.length <= MAX_TOKEN_LENGTH ? token : null;
}

/**
 * Requires a valid bearer token carrying `scope` (RFC 6750). Runs before the body is read, so
 * an unauthenticated caller learns nothing about validation.
 */
export function bearerAuth(authenticate: AuthenticateToken, scope: Scope): Middleware<AppState> {
  return async (ctx, next) => {
    const header = ctx.req.headers.authorization ?? '';
    if (header === '') {
      throw new ApiError(ErrorCode.NotAuthenticated, AUTHENTICATION_REQUIRED_MESSAGE, {
        headers: { 'WWW-Authenticate': REALM },
      });
    }
    // RFC 6750 3.1: a request without a Bearer credential (no scheme word, another scheme) gets
    // the bare challenge, no error code; the message says what is missing, never echoing the header.
    if (!BEARER_SCHEME.test(header)) {
      throw new ApiError(ErrorCode.NotAuthenticated, MISSING_SCHEME_MESSAGE, {
        headers: { 'WWW-Authenticate': REALM },
      });
    }
    const token = parseBearerToken(header);
    const record = token === null ? null : await authenticate(token);
    if (record === null) {
      throw new ApiError(ErrorCode.NotAuthenticated, INVALID_TOKEN_MESSAGE, {
        headers: { 'WWW-Authenticate': `${REALM}, error="invalid_token"` },
      });
    }
    if (!record.scopes.includes(scope)) {
      throw new ApiError(ErrorCode.NotAllowed, missingScopeMessage(scope), {
        headers: { 'WWW-Authenticate': `${REALM}, error="insufficient_scope", scope="${scope}"` },
      });
    }
    ctx.state.token = record;
    await next();
  };
}
