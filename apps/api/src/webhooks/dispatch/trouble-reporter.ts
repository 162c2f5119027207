import type { Logger } from '../../logger.js';

/** Repeated warnings (database down) at most this often. */
export const WARN_INTERVAL_MS = 60_000;

export interface TroubleReporter {
  /** A failure: warned about at once, then at most every WARN_INTERVAL_MS (with how many were not). */
  report(error: unknown, fields?: Record<string, unknown>): void;
  /** It works again: said once (with how long the trouble lasted), if there was trouble. */
  resolved(message: string): void;
}

/**
 * One recurring failure of the dispatcher's (claiming, fanning out, recording), so that a database
 * that is away for minutes makes a warning a minute, not one a poll. Owns when it last warned.
 */
export function createTroubleReporter(log: Logger, message: string, clock: () => number = Date.now): TroubleReporter {
  let since: number | undefined;
  let lastWarned: number | undefined;
  let suppressed = 0;
  return {
    report(error, fields = {}) {
      const at = clock();
      since ??= at;
      if (lastWarned !== undefined && at - lastWarned < WARN_INTERVAL_MS) {
        suppressed += 1;
        return;
      }
      log.warn({ ...fields, err: error, ...(suppressed > 0 ? { suppressed } : {}) }, message);
      lastWarned = at;
      suppressed = 0;
    },
    resolved(message) {
      if (since === undefined) return;
      log.info({ afterMs: clock() - since }, message);
      since = undefined;
      lastWarned = undefined;
      suppressed = 0;
    },
  };
}
