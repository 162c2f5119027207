import { hash } from 'node:crypto';
import type { ActiveToken } from './authenticate-token.js';
import type { AuthenticatedToken } from './token-record.js';

export interface TokenDirectoryOptions {
  /**
   * How often every active token is loaded again: a token revoked by another process (a replica,
   * the token command) stops authenticating here within this long.
   */
  readonly refreshMs: number;
  /** How long a "no such token" answer is reused (a token issued elsewhere works here after it at most). */
  readonly unknownTtlMs: number;
  /** Most "no such token" answers remembered; the oldest is dropped first. */
  readonly maxUnknownEntries: number;
  /** A refresh failed (the database is away): the tokens loaded before stay, and the next interval tries again. */
  readonly onRefreshError?: (error: unknown) => void;
}

export interface TokenDirectory {
  /** Loads every active token: before the process serves. Rejects when the database cannot be read. */
  start(): Promise<void>;
  /**
   * The token's record, or null when it is unknown or revoked. A token the directory holds costs
   * a hash and a map lookup, no query; one it does not hold is looked up once per `unknownTtlMs`.
   */
  authenticate(token: string): Promise<AuthenticatedToken | null>;
  /** Whether `token` is an active token this process knows: no query, no lookup. */
  knows(token: string): boolean;
  /** A token this process has just issued: known at once. */
  issued(token: string, record: AuthenticatedToken): void;
  /** A token this process has just revoked (by id): refused at once, and never put back by a refresh that began before. */
  revoked(id: string): void;
  /** Active tokens held now. */
  size(): number;
  /** Stops refreshing. */
  close(): void;
}

interface UnknownEntry {
  readonly expiresAt: number;
}

/**
 * Every active token of the database, by the SHA-256 of the token, in this process's memory:
 * loaded before it serves and again every `refreshMs`. So a token that exists authenticates with
 * no query on every replica, one started a moment ago included, and `knows` tells a working token
 * from a made-up one without asking anything: a flood of made-up tokens from a client's address
 * can be refused before any lookup while the real tokens sent from that address still pass. A
 * token issued by another process since the last refresh is looked up (once, then held); a token
 * that does not exist is remembered as unknown for `unknownTtlMs`, apart, with its own bound, so
 * made-up tokens can never push a real one out. Expired tokens stay until revoked: the caller
 * judges `expiresAt` on every request. Memory: about 800 bytes a token (10,000 tokens, 8 MB).
 */
export function createTokenDirectory(
  store: {
    readonly listActive: () => Promise<ActiveToken[]>;
    readonly lookUp: (token: string) => Promise<AuthenticatedToken | null>;
  },
  options: TokenDirectoryOptions,
): TokenDirectory {
  let byKey = new Map<string, AuthenticatedToken>();
  let keyById = new Map<string, string>();
  const unknown = new Map<string, UnknownEntry>();
  const pending = new Map<string, Promise<AuthenticatedToken | null>>();
  /** Loads begun, counted: a revocation made here after a load began is applied to its result. */
  let loadsBegun = 0;
  const revokedDuringLoad = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  /** A reload is under way: a slow one is not doubled. */
  let refreshing = false;

  // One-shot hashing: no Hash object per request (this runs on every authenticated call).
  const keyOf = (token: string) => hash('sha256', token, 'base64');

  function hold(key: string, record: AuthenticatedToken): void {
    byKey.set(key, record);
    keyById.set(record.id, key);
    unknown.delete(key);
  }

  async function load(): Promise<void> {
    const begun = ++loadsBegun;
    const active = await store.listActive();
    const nextByKey = new Map<string, AuthenticatedToken>();
    const nextKeyById = new Map<string, string>();
    for (const { tokenHash, record } of active) {
      const revokedAt = revokedDuringLoad.get(record.id);
      if (revokedAt !== undefined && revokedAt >= begun) continue;
      const key = Buffer.from(tokenHash).toString('base64');
      nextByKey.set(key, record);
      nextKeyById.set(record.id, key);
    }
    byKey = nextByKey;
    keyById = nextKeyById;
    for (const [id, at] of revokedDuringLoad) if (at <= begun) revokedDuringLoad.delete(id);
    // Tokens issued elsewhere and tried here before they were loaded are known now.
    for (const key of unknown.keys()) if (byKey.has(key)) unknown.delete(key);
  }

  function refresh(): void {
    if (refreshing) return;
    refreshing = true;
    load()
      .catch((error: unknown) => options.onRefreshError?.(error))
      .finally(() => {
        refreshing = false;
      });
  }

  function rememberUnknown(key: string): void {
    unknown.delete(key);
    unknown.set(key, { expiresAt: performance.now() + options.unknownTtlMs });
    while (unknown.size > options.maxUnknownEntries) {
      const oldest = unknown.keys().next().value;
      if (oldest === undefined) break;
      unknown.delete(oldest);
    }
  }

  return {
    async start() {
      await load();
      timer ??= setInterval(refresh, options.refreshMs);
      timer.unref();
    },
    authenticate(token) {
      const key = keyOf(token);
      const held = byKey.get(key);
      if (held !== undefined) return Promise.resolve(held);
      const remembered = unknown.get(key);
      if (remembered !== undefined && remembered.expiresAt > performance.now()) return Promise.resolve(null);
      const inFlight = pending.get(key);
      if (inFlight !== undefined) return inFlight;
      const answer = store.lookUp(token);
      pending.set(key, answer);
      answer.then(
        (record) => {
          if (pending.get(key) !== answer) return;
          pending.delete(key);
          if (record === null) rememberUnknown(key);
          else hold(key, record);
        },
        () => {
          // Failures (the database is away) are not remembered.
          if (pending.get(key) === answer) pending.delete(key);
        },
      );
      return answer;
    },
    knows(token) {
      return byKey.has(keyOf(token));
    },
    issued(token, record) {
      const key = keyOf(token);
      pending.delete(key);
      hold(key, record);
    },
    revoked(id) {
      revokedDuringLoad.set(id, loadsBegun);
      const key = keyById.get(id);
      if (key === undefined) return;
      keyById.delete(id);
      byKey.delete(key);
      pending.delete(key);
    },
    size: () => byKey.size,
    close() {
      clearInterval(timer);
    },
  };
}
