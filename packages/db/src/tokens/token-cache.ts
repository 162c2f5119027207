import { hash } from 'node:crypto';
import type { AuthenticatedToken } from './token-record.js';

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
  authenticate(token: string): Promise<AuthenticatedToken | null>;
  /**
   * Whether this process has seen `token` authenticate (its answer may be older than the TTL,
   * and is then looked up again by `authenticate`): no query. For refusing lookups of tokens
   * nobody has seen, while the tokens in use pass.
   */
  knows(token: string): boolean;
  /** Forgets the "no such token" answers (after a token is issued by this process). */
  forgetUnknown(): void;
  /** Forgets every answer (after a token is revoked by this process). */
  clear(): void;
}

interface Entry {
  readonly answer: Promise<AuthenticatedToken | null>;
  readonly expiresAt: number;
}

/**
 * Remembers token lookups for `ttlMs`, so that a busy client costs one query per token per
 * TTL instead of one per request; concurrent lookups of one token share one query. Keys are the
 * token's SHA-256, never the token. Real tokens and unknown ones are remembered in separate maps
 * with separate bounds, so no number of made-up tokens can push a real one out; a real token's
 * answer stays in its map past its TTL (until newer ones push it out), so that `knows` can tell
 * it from a made-up one. Failures (database unavailable) are not remembered. A token revoked by
 * another process (the token command, another replica) stops working within `ttlMs`.
 */
export function createTokenCache(
  lookUp: (token: string) => Promise<AuthenticatedToken | null>,
  options: TokenCacheOptions,
): TokenCache {
  const known = new Map<string, Entry>();
  const unknown = new Map<string, Entry>();
  const pending = new Map<string, Promise<AuthenticatedToken | null>>();
  const maxUnknown = options.maxNegativeEntries ?? options.maxEntries;
  const remember = (entries: Map<string, Entry>, key: string, entry: Entry, max: number) => {
    // Newest last: the first key is the one to drop.
    entries.delete(key);
    entries.set(key, entry);
    while (entries.size > max) {
      const oldest = entries.keys().next().value;
      if (oldest === undefined) break;
      entries.delete(oldest);
    }
  };
  // One-shot hashing: no Hash object per request (this runs on every authenticated call).
  const keyOf = (token: string) => hash('sha256', token, 'base64');
  return {
    authenticate(token) {
      if (options.ttlMs <= 0) return lookUp(token);
      const key = keyOf(token);
      const now = performance.now();
      const cached = known.get(key) ?? unknown.get(key);
      if (cached !== undefined && cached.expiresAt > now) return cached.answer;
      const inFlight = pending.get(key);
      if (inFlight !== undefined) return inFlight;
      const answer = lookUp(token);
      pending.set(key, answer);
      const expiresAt = now + options.ttlMs;
      answer.then(
        (record) => {
          if (pending.get(key) !== answer) return;
          pending.delete(key);
          if (record === null) {
            known.delete(key);
            remember(unknown, key, { answer, expiresAt }, maxUnknown);
          } else {
            unknown.delete(key);
            remember(known, key, { answer, expiresAt }, options.maxEntries);
          }
        },
        () => {
          if (pending.get(key) === answer) pending.delete(key);
        },
      );
      return answer;
    },
    knows(token) {
      return known.has(keyOf(token));
    },
    forgetUnknown() {
      unknown.clear();
      pending.clear();
    },
    clear() {
      known.clear();
      unknown.clear();
      pending.clear();
    },
  };
}
