import type { IssuedToken, TokenRecord } from '@plant-store/db';
import type { CreatedToken, Token } from '@plant-store/schema';

/**
 * Token records as the wire contract spells them: dates as RFC 3339 strings, fields the record
 * holds as null left out, never the id or the hash. Typed with the schema package's types, so a
 * shape that drifts does not compile.
 */
export function toToken(record: TokenRecord): Token {
  return {
    name: record.name,
    team: record.team,
    scopes: [...record.scopes],
    createdAt: record.createdAt.toISOString(),
    ...(record.expiresAt === null ? {} : { expiresAt: record.expiresAt.toISOString() }),
    ...(record.lastUsedAt === null ? {} : { lastUsedAt: record.lastUsedAt.toISOString() }),
    ...(record.rateLimit === null ? {} : { rateLimit: { ...record.rateLimit } }),
  };
}

/** The answer of `POST /tokens`: the one time the token itself is shown. */
export function toCreatedToken({ token, record }: IssuedToken): CreatedToken {
  return { ...toToken(record), token };
}
