import { translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';
import { type AuthenticatedToken, rateLimitOf } from './token-record.js';
import { hashesEqual, hashToken } from './token-secret.js';

/** The columns an AuthenticatedToken is made of, and the hash it is found by. */
const AUTHENTICATED_TOKEN_COLUMNS = `id::text AS id, name, team, scopes, revoked_at AS "revokedAt",
  expires_at AS "expiresAt", rate_limit_requests AS "rateLimitRequests",
  rate_limit_per_seconds AS "rateLimitPerSeconds", token_hash AS "tokenHash"`;

/** A token's record by the SHA-256 of the token (the unique token_hash index). */
export const AUTHENTICATE_TOKEN_SQL = `SELECT ${AUTHENTICATED_TOKEN_COLUMNS}
FROM public.api_tokens WHERE token_hash = $1`;

/** Every token that is not revoked, expired ones included: what the token directory holds. */
export const ACTIVE_TOKENS_SQL = `SELECT ${AUTHENTICATED_TOKEN_COLUMNS}
FROM public.api_tokens WHERE revoked_at IS NULL`;

interface TokenRow {
  readonly id: string;
  readonly name: string;
  readonly team: string;
  readonly scopes: string[];
  readonly revokedAt: Date | null;
  readonly expiresAt: Date | null;
  readonly rateLimitRequests: number | null;
  readonly rateLimitPerSeconds: number | null;
  readonly tokenHash: Uint8Array;
}

/** An active token's record with the SHA-256 of the token: how the token directory keys it. */
export interface ActiveToken {
  readonly tokenHash: Uint8Array;
  readonly record: AuthenticatedToken;
}

/**
 * The record of this bearer token unless it is unknown or revoked (null). An expired token's
 * record is returned: the caller judges `expiresAt` against its clock on every request, cached
 * answers included. Through the driver, as the other hot statements: a token the directory does
 * not hold costs one lookup.
 */
export async function authenticateToken(sql: SqlRunner, token: string): Promise<AuthenticatedToken | null> {
  const hash = hashToken(token);
  try {
    const [row] = (await sql.query<TokenRow>(AUTHENTICATE_TOKEN_SQL, [hash])).rows;
    // The index finds the row by hash; the final comparison is constant-time all the same.
    if (!row || row.revokedAt !== null || !hashesEqual(row.tokenHash, hash)) return null;
    return toAuthenticatedToken(row);
  } catch (error) {
    throw translateError(error);
  }
}

/** Every active token with its hash (see ACTIVE_TOKENS_SQL). */
export async function listActiveTokens(sql: SqlRunner): Promise<ActiveToken[]> {
  try {
    const { rows } = await sql.query<TokenRow>(ACTIVE_TOKENS_SQL, []);
    return rows.map((row) => ({ tokenHash: row.tokenHash, record: toAuthenticatedToken(row) }));
  } catch (error) {
    throw translateError(error);
  }
}

function toAuthenticatedToken(row: TokenRow): AuthenticatedToken {
  return {
    id: row.id,
    name: row.name,
    team: row.team,
    scopes: row.scopes,
    expiresAt: row.expiresAt,
    rateLimit: rateLimitOf(row),
  };
}
