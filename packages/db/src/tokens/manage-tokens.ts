import { TokenNotFoundError } from '../errors.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { translateError } from '../prisma-errors.js';
import { type TokenRecord, tokenRecordSelect } from './token-record.js';

/** Every token, revoked ones included, oldest first. */
export async function listTokens(prisma: PrismaClient): Promise<TokenRecord[]> {
  try {
    return await prisma.apiToken.findMany({ select: tokenRecordSelect, orderBy: { createdAt: 'asc' } });
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
    return await prisma.apiToken.findUniqueOrThrow({ where: { name }, select: tokenRecordSelect });
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
