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

export const tokenRecordSelect = {
  id: true,
  name: true,
  scopes: true,
  createdAt: true,
  revokedAt: true,
  expiresAt: true,
  lastUsedAt: true,
  rateLimitRequests: true,
  rateLimitPerSeconds: true,
} as const;

/** The row Prisma reads with tokenRecordSelect. */
export interface TokenRow {
  readonly id: string;
  readonly name: string;
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
