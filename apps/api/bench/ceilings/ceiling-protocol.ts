/** Messages between the bench and its ceiling processes (Node IPC, JSON-serialisable). */
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
