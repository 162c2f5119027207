import { translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';

/**
 * Stamps `last_used_at` on many tokens in one statement; a stamp never moves a token's time
 * backwards (another replica may have written a later one). Ids and times go as text, cast in the
 * database: the same on both drivers.
 */
export const RECORD_TOKEN_USE_SQL = `UPDATE public.api_tokens AS token SET last_used_at = used.at
FROM unnest($1::text[]::uuid[], $2::text[]::timestamptz[]) AS used (id, at)
WHERE token.id = used.id AND (token.last_used_at IS NULL OR token.last_used_at < used.at)`;

export interface TokenUseRecorderOptions {
  /** How often the stamps collected are written (one statement for all of them). */
  readonly flushIntervalMs: number;
  /** A flush failed (the database is away): its stamps are kept for the next one. */
  readonly onFlushError?: (error: unknown) => void;
}

export interface TokenUseRecorder {
  /** Notes that token `id` authenticated a request now: no I/O, a map entry per token. */
  record(id: string): void;
  /** Writes the stamps collected so far; on failure keeps them for the next flush and rethrows. */
  flush(): Promise<void>;
  /** Stops the timer and writes what is left (once; a failure is reported, not thrown). */
  close(): Promise<void>;
}

/**
 * Collects "this token was used at" in memory and writes them every `flushIntervalMs` in one
 * statement, and at close: `last_used_at` costs one write per interval per process, never one per
 * request, and is at most one interval behind (a process killed without closing loses its last
 * interval's stamps). Memory is one entry per token used since the last flush: only tokens that
 * authenticated get here, so made-up ones cannot grow it.
 */
export function createTokenUseRecorder(sql: SqlRunner, options: TokenUseRecorderOptions): TokenUseRecorder {
  let stamps = new Map<string, number>();
  let flushing: Promise<void> | undefined;
  let closed: Promise<void> | undefined;

  async function write(batch: Map<string, number>): Promise<void> {
    const ids = [...batch.keys()];
    const times = ids.map((id) => new Date(batch.get(id) ?? 0).toISOString());
    try {
      await sql.query(RECORD_TOKEN_USE_SQL, [ids, times]);
    } catch (error) {
      // Kept for the next flush, merged with what came since (the later time wins).
      for (const [id, at] of batch) stamps.set(id, Math.max(at, stamps.get(id) ?? 0));
      throw translateError(error);
    }
  }

  function flush(): Promise<void> {
    // One statement at a time: a slow one is joined, not doubled.
    if (flushing !== undefined) return flushing;
    if (stamps.size === 0) return Promise.resolve();
    const batch = stamps;
    stamps = new Map();
    flushing = write(batch).finally(() => {
      flushing = undefined;
    });
    return flushing;
  }

  const report = (error: unknown) => options.onFlushError?.(error);
  const timer = setInterval(() => flush().catch(report), options.flushIntervalMs);
  timer.unref();

  return {
    record(id) {
      stamps.set(id, Date.now());
    },
    flush,
    close() {
      closed ??= (async () => {
        clearInterval(timer);
        await flushing?.catch(() => {});
        await flush().catch(report);
      })();
      return closed;
    },
  };
}
