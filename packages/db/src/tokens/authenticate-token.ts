import { translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';
import type { TokenRecord } from './token-record.js';
import { hashesEqual, hashToken } from './token-secret.js';

/** A token's record by the SHA-256 of the token (the unique token_hash index). */
export const AUTHENTICATE_TOKEN_SQL = `SELECT id::text AS id, name, scopes, created_at AS "createdAt",
  revoked_at AS "revokedAt", token_hash AS "tokenHash"
FROM public.api_tokens WHERE token_hash = $1`;

interface TokenRow extends TokenRecord {
  readonly tokenHash: Uint8Array;
}

/**
 * The active (not revoked) token record for this bearer token, or null. Through the driver, as
 * the other hot statements: every token the cache does not know costs one lookup.
 */
export async function authenticateToken(sql: SqlRunner, token: string): Promise<TokenRecord | null> {
  const hash = hashToken(token);
  try {
    const [row] = (await sql.query<TokenRow>(AUTHENTICATE_TOKEN_SQL, [hash])).rows;
    // The index finds the row by hash; the final comparison is constant-time all the same.
    if (!row || row.revokedAt !== null || !hashesEqual(row.tokenHash, hash)) return null;
    const { tokenHash: _, ...record } = row;
    return record;
  } catch (error) {
    throw translateError(error);
  }
}
