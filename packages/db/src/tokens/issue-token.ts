import { TokenNameTakenError } from '../errors.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { isUniqueViolation, translateError } from '../prisma-errors.js';
import { type TokenRateLimit, type TokenRecord, tokenRecordSelect, toTokenRecord } from './token-record.js';
import { generateToken, hashToken } from './token-secret.js';

export interface IssueTokenOptions {
  readonly name: string;
  readonly scopes: readonly string[];
  /** When it stops authenticating; absent: never. */
  readonly expiresAt?: Date;
  /** Its own rate limit; absent: the service's default. */
  readonly rateLimit?: TokenRateLimit;
}

export interface IssuedToken {
  /** The bearer token itself: shown once, stored nowhere. */
  readonly token: string;
  readonly record: TokenRecord;
}

/** A new token; TokenNameTakenError when any token, revoked ones included, has the name. */
export async function issueToken(prisma: PrismaClient, options: IssueTokenOptions): Promise<IssuedToken> {
  const token = generateToken();
  try {
    const row = await prisma.apiToken.create({
      data: {
        name: options.name,
        scopes: [...new Set(options.scopes)],
        tokenHash: hashToken(token),
        expiresAt: options.expiresAt ?? null,
        rateLimitRequests: options.rateLimit?.requests ?? null,
        rateLimitPerSeconds: options.rateLimit?.perSeconds ?? null,
      },
      select: tokenRecordSelect,
    });
    return { token, record: toTokenRecord(row) };
  } catch (error) {
    if (isUniqueViolation(error)) throw new TokenNameTakenError(options.name);
    throw translateError(error);
  }
}
