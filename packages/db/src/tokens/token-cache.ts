import { hash } from 'node:crypto';
import type { TokenRecord } from './token-record.js';

export interface TokenCacheOptions {
  /** How long an answer (a record, or "no such active token") is reused. 0 turns caching off. */
  readonly ttlMs: number;
  /** Most tokens remembered; the oldest answer is dropped first. */
  readonly maxEntries: number;
}

export interface TokenCache {
  authenticate(token: string): Promise<TokenRecord | null>;
  /** Forgets every answer (after a token is issued or revoked by this process). */
  clear(): void;
}

interface Entry {
  readonly answer: Promise<TokenRecord | null>;
  readonly expiresAt: number;
}

/**
 * Remembers token lookups for `ttlMs`, so that a busy client costs one query per token per
 * TTL instead of one per request; concurrent lookups of one token share one query. Keys are the
 * token's SHA-256, never the token. Failures (database unavailable) are not remembered. A token
 * revoked by another process (the token command, another replica) stops working within `ttlMs`.
 */
export function createTokenCache(
  lookUp: (token: string) => Promise<TokenRecord | null>,
  options: TokenCacheOptions,
): TokenCache {
  const entries = new Map<string, Entry>();
  return {
    authenticate(token) {
      if (options.ttlMs <= 0) return lookUp(token);
      // One-shot hashing: no Hash object per request (this runs on every authenticated call).
      const key = hash('sha256', token, 'base64');
      const now = performance.now();
      const cached = entries.get(key);
      if (cached && cached.expiresAt > now) return cached.answer;
      if (cached) entries.delete(key);
      const answer = lookUp(token);
      entries.set(key, { answer, expiresAt: now + options.ttlMs });
      answer.catch(() => {
        if (entries.get(key)?.answer === answer) entries.delete(key);
      });
      while (entries.size > options.maxEntries) {
        const oldest = entries.keys().next().value;
        if (oldest === undefined) break;
        entries.delete(oldest);
      }
      return answer;
    },
    clear() {
      entries.clear();
    },
  };
}
