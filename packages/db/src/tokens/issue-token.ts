import { TokenNameTakenError } from '../errors.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { isUniqueViolation, translateError } from '../prisma-errors.js';
import { type TokenRecord, tokenRecordSelect } from './token-record.js';
import { generateToken, hashToken } from './token-secret.js';

export interface IssueTokenOptions {
  readonly name: string;
  readonly scopes: readonly string[];
}

export interface IssuedToken {
  /** The bearer token itself: shown once, stored nowhere. */
  readonly token: string;
  readonly record: TokenRecord;
}

export async function issueToken(prisma: PrismaClient, options: IssueTokenOptions): Promise<IssuedToken> {
  const token = generateToken();
  try {
    const record = await prisma.apiToken.create({
      data: { name: options.name, scopes: [...new Set(options.scopes)], tokenHash: hashToken(token) },
      select: tokenRecordSelect,
    });
    return { token, record };
  } catch (error) {
    if (isUniqueViolation(error)) throw new TokenNameTakenError(options.name);
    throw translateError(error);
  }
}
