import { hash } from 'node:crypto';
import type { TokenRecord } from './token-record.js';

export interface TokenCacheOptions {
  /** How long an answer (a record, or "no such active token") is reused. 0 turns caching off. */
  readonly ttlMs: number;
  /** Most real tokens remembered; the oldest answer is dropped first. */
  readonly maxEntries: number;
  /**
   * Most "no such token" answers remembered, apart from the real ones (default maxEntries): a
   * flood of made-up tokens drops older made-up ones, never a real token's answer.
   */
  readonly maxNegativeEntries?: number;
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
 * token's SHA-256, never the token. Real tokens and unknown ones are remembered in separate maps
 * with separate bounds, so no number of made-up tokens can push a real one out. Failures
 * (database unavailable) are not remembered. A token revoked by another process (the token
 * command, another replica) stops working within `ttlMs`.
 */
export function createTokenCache(
  lookUp: (token: string) => Promise<TokenRecord | null>,
  options: TokenCacheOptions,
): TokenCache {
  const known = new Map<string, Entry>();
  const unknown = new Map<string, Entry>();
  const pending = new Map<string, Promise<TokenRecord | null>>();
  const maxUnknown = options.maxNegativeEntries ?? options.maxEntries;
  const remember = (entries: Map<string, Entry>, key: string, entry: Entry, max: number) => {
    entries.set(key, entry);
    while (entries.size > max) {
      const oldest = entries.keys().next().value;
      if (oldest === undefined) break;
      entries.delete(oldest);
    }
  };
  return {
    authenticate(token) {
      if (options.ttlMs <= 0) return lookUp(token);
      // One-shot hashing: no Hash object per request (this runs on every authenticated call).
      const key = hash('sha256', token, 'base64');
      const now = performance.now();
      for (const entries of [known, unknown]) {
        const cached = entries.get(key);
        if (cached === undefined) continue;
        if (cached.expiresAt > now) return cached.answer;
        entries.delete(key);
      }
      const inFlight = pending.get(key);
      if (inFlight !== undefined) return inFlight;
      const answer = lookUp(token);
      pending.set(key, answer);
      const expiresAt = now + options.ttlMs;
      answer.then(
        (record) => {
          if (pending.get(key) !== answer) return;
          pending.delete(key);
          if (record === null) remember(unknown, key, { answer, expiresAt }, maxUnknown);
          else remember(known, key, { answer, expiresAt }, options.maxEntries);
        },
        () => {
          if (pending.get(key) === answer) pending.delete(key);
        },
      );
      return answer;
    },
    clear() {
      known.clear();
      unknown.clear();
      pending.clear();
    },
  };
}
