import type { PrismaClient } from '../generated/prisma/client.js';
import { translateError } from '../prisma-errors.js';
import { type TokenRecord, tokenRecordSelect } from './token-record.js';
import { hashesEqual, hashToken } from './token-secret.js';

/** The active (not revoked) token record for this bearer token, or null. */
export async function authenticateToken(prisma: PrismaClient, token: string): Promise<TokenRecord | null> {
  const hash = hashToken(token);
  try {
    const row = await prisma.apiToken.findUnique({
      where: { tokenHash: hash },
      select: { ...tokenRecordSelect, tokenHash: true },
    });
    // The index finds the row by hash; the final comparison is constant-time all the same.
    if (!row || row.revokedAt !== null || !hashesEqual(row.tokenHash, hash)) return null;
    const { tokenHash: _, ...record } = row;
    return record;
  } catch (error) {
    throw translateError(error);
  }
}
