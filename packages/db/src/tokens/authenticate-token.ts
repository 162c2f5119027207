import { translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';
import { type AuthenticatedToken, rateLimitOf } from './token-record.js';
import { hashesEqual, hashToken } from './token-secret.js';

/** A token's record by the SHA-256 of the token (the unique token_hash index). */
export const AUTHENTICATE_TOKEN_SQL = `SELECT id::text AS id, name, scopes, revoked_at AS "revokedAt",
  expires_at AS "expiresAt", rate_limit_requests AS "rateLimitRequests",
  rate_limit_per_seconds AS "rateLimitPerSeconds", token_hash AS "tokenHash"
FROM public.api_tokens WHERE token_hash = $1`;

interface TokenRow {
  readonly id: string;
  readonly name: string;
  readonly scopes: string[];
  readonly revokedAt: Date | null;
  readonly expiresAt: Date | null;
  readonly rateLimitRequests: number | null;
  readonly rateLimitPerSeconds: number | null;
  readonly tokenHash: Uint8Array;
}

/**
 * The record of this bearer token unless it is unknown or revoked (null). An expired token's
 * record is returned: the caller judges `expiresAt` against its clock on every request, cached
 * answers included. Through the driver, as the other hot statements: every token the cache does
 * not know costs one lookup.
 */
export async function authenticateToken(sql: SqlRunner, token: string): Promise<AuthenticatedToken | null> {
  const hash = hashToken(token);
  try {
    const [row] = (await sql.query<TokenRow>(AUTHENTICATE_TOKEN_SQL, [hash])).rows;
    // The index finds the row by hash; the final comparison is constant-time all the same.
    if (!row || row.revokedAt !== null || !hashesEqual(row.tokenHash, hash)) return null;
    return {
      id: row.id,
      name: row.name,
      scopes: row.scopes,
      expiresAt: row.expiresAt,
      rateLimit: rateLimitOf(row),
    };
  } catch (error) {
    throw translateError(error);
  }
}
