import { Prisma } from '../generated/prisma/client.js';

/** A token's own rate limit: at most `requests` requests per `perSeconds` seconds. */
export interface TokenRateLimit {
  readonly requests: number;
  readonly perSeconds: number;
}

/**
 * What authenticating a request needs of a token, as the token cache keeps it: never the token,
 * never its hash. `expiresAt` travels with it so that expiry is judged on every request, cached
 * or not.
 */
export interface AuthenticatedToken {
  readonly id: string;
  readonly name: string;
  /** The team it belongs to: what it sees and manages of tokens and subscriptions. */
  readonly team: string;
  readonly scopes: readonly string[];
  /** When it stops authenticating; null: never. */
  readonly expiresAt: Date | null;
  /** Its own rate limit; null: the service's default. */
  readonly rateLimit: TokenRateLimit | null;
}

/** A token as everyone but its holder sees it: never the token, never its hash. */
export interface TokenRecord extends AuthenticatedToken {
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
  /** When it last authenticated a request, as recorded in batches (see createTokenUseRecorder). */
  readonly lastUsedAt: Date | null;
}

/** A token's record as a raw statement selects or returns it: the columns TokenRow names. */
export const TOKEN_RECORD_COLUMNS = Prisma.raw(`id::text AS id, name, team, scopes, created_at AS "createdAt",
  revoked_at AS "revokedAt", expires_at AS "expiresAt", last_used_at AS "lastUsedAt",
  rate_limit_requests AS "rateLimitRequests", rate_limit_per_seconds AS "rateLimitPerSeconds"`);

/** The row a statement reads with TOKEN_RECORD_COLUMNS. */
export interface TokenRow {
  readonly id: string;
  readonly name: string;
  readonly team: string;
  readonly scopes: string[];
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
  readonly expiresAt: Date | null;
  readonly lastUsedAt: Date | null;
  readonly rateLimitRequests: number | null;
  readonly rateLimitPerSeconds: number | null;
}

/** Both numbers or neither, as the table's check constraint keeps them. */
export function rateLimitOf(row: Pick<TokenRow, 'rateLimitRequests' | 'rateLimitPerSeconds'>): TokenRateLimit | null {
  const { rateLimitRequests: requests, rateLimitPerSeconds: perSeconds } = row;
  return requests === null || perSeconds === null ? null : { requests, perSeconds };
}

export function toTokenRecord({ rateLimitRequests, rateLimitPerSeconds, ...row }: TokenRow): TokenRecord {
  return { ...row, rateLimit: rateLimitOf({ rateLimitRequests, rateLimitPerSeconds }) };
}

/** What authenticating needs of a token's record (see AuthenticatedToken): no dates but its expiry. */
export function authenticatedTokenOf(record: TokenRecord): AuthenticatedToken {
  const { id, name, team, scopes, expiresAt, rateLimit } = record;
  return { id, name, team, scopes, expiresAt, rateLimit };
}
