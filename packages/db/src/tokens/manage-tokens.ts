import { TokenNotFoundError } from '../errors.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { translateError } from '../prisma-errors.js';
import { type TokenRecord, tokenRecordSelect, toTokenRecord } from './token-record.js';

export interface ListTokensOptions {
  /** Also the revoked ones (the token command lists them; the HTTP listing does not). Default false. */
  readonly includeRevoked?: boolean;
}

/** Tokens, oldest first: the active ones (expired ones included), or every one. */
export async function listTokens(prisma: PrismaClient, options: ListTokensOptions = {}): Promise<TokenRecord[]> {
  try {
    const rows = await prisma.apiToken.findMany({
      select: tokenRecordSelect,
      ...(options.includeRevoked ? {} : { where: { revokedAt: null } }),
      orderBy: [{ createdAt: 'asc' }, { name: 'asc' }],
    });
    return rows.map(toTokenRecord);
  } catch (error) {
    throw translateError(error);
  }
}

/** Revokes the active token named `name`; it stops authenticating within the token cache TTL (5 s), at once in the revoking process. */
export async function revokeToken(prisma: PrismaClient, name: string): Promise<TokenRecord> {
  try {
    const { count } = await prisma.apiToken.updateMany({
      where: { name, revokedAt: null },
      data: { revokedAt: new Date() },
    });
    if (count === 0) throw new TokenNotFoundError(name);
    return toTokenRecord(await prisma.apiToken.findUniqueOrThrow({ where: { name }, select: tokenRecordSelect }));
  } catch (error) {
    throw translateError(error);
  }
}

export async function countTokens(prisma: PrismaClient): Promise<number> {
  try {
    return await prisma.apiToken.count();
  } catch (error) {
    throw translateError(error);
  }
}
