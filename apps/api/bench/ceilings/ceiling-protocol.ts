/** Messages between the bench and its ceiling processes (Node IPC, JSON-serialisable). */
import type { Server } from 'node:http';
import type { Measurement } from '../measurement.js';

/** What a database ceiling runs: the plant insert, or the service's read statements. */
export type CeilingKind = 'insert' | 'select' | 'page';

/** Bench to a database ceiling: run one point. */
export interface MeasureRequest {
  readonly type: 'measure';
  readonly kind: CeilingKind;
  readonly concurrency: number;
  readonly warmupSeconds: number;
  readonly durationSeconds: number;
}

/** The bare HTTP server listens. */
export interface HttpCeilingReady {
  readonly type: 'ready';
  readonly port: number;
}

/** The database ceiling has its table. */
export interface DatabaseCeilingReady {
  readonly type: 'ready';
  /** `SELECT version()` of the database it inserts into. */
  readonly version: string;
  /** Rows the service left in `plants` (its run on this database came first), or null if none. */
  readonly servicePlants: number | null;
}

export interface Measured {
  readonly type: 'measured';
  readonly measurement: Measurement;
  /** Database connections used (PostgreSQL); 1 for PGlite, which has one. */
  readonly connections: number;
}

export interface Failed {
  readonly type: 'failed';
  readonly message: string;
}

export function isMessage<T extends { readonly type: string }>(type: T['type']) {
  return (message: unknown): message is T =>
    typeof message === 'object' && message !== null && 'type' in message && message.type === type;
}

/**
 * For an HTTP ceiling process: listens on a free port of 127.0.0.1, sends `ready` with it, and on
 * SIGTERM closes every connection (then `onStop`) and lets the process end.
 */
export function serveForBench(server: Server, onStop?: () => void): void {
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    if (address === null || typeof address !== 'object') throw new Error('the ceiling server has no port');
    const ready: HttpCeilingReady = { type: 'ready', port: address.port };
    process.send?.(ready);
  });
  process.once('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    onStop?.();
    process.disconnect?.();
  });
}
