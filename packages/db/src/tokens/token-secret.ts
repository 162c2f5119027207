import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Recognisable prefix, so leaked tokens are easy to spot (and to scan for). */
export const TOKEN_PREFIX = 'pst_';

/** A new opaque token: the prefix and 256 random bits, base64url. */
export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/** What the database keeps instead of the token. */
export function hashToken(token: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(createHash('sha256').update(token, 'utf8').digest());
}

export function hashesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
