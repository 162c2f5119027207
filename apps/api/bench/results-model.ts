import type { CpuShare } from './cpu-usage.js';
import type { Measurement } from './measurement.js';
import type { Engine } from './options.js';

/** What a row measures: the two ceilings, and the service answering a create or an invalid body. */
export type Scenario = 'http-ceiling' | 'raw-insert' | 'create' | 'invalid-body';

export interface Point {
  readonly scenario: Scenario;
  /** null for the HTTP ceiling, which touches no database. */
  readonly engine: Engine | null;
  readonly concurrency: number;
  readonly measurement: Measurement;
  /** Highest RSS sampled (every 200 ms) in the process under load during this point, warm-up included. */
  readonly peakRssBytes: number | null;
  /** CPU over the measured window (warm-up excluded), in percent of one core. */
  readonly cpu: CpuShare;
  /** Raw inserts: database connections used. */
  readonly connections?: number;
}

export interface RowCheck {
  /** Rows in `plants` after the service's run. */
  readonly rows: number | null;
  /** 200 answers to POST /plants, warm-ups included: each must be a row (ids never repeat). */
  readonly created: number;
  /** Requests in flight when a run stopped (concurrency, summed over runs): rows without a counted 200. */
  readonly unanswered: number;
  /** created <= rows <= created + unanswered: no 200 was a replay, and no row came from elsewhere. */
  readonly ok: boolean;
}

export interface EngineRun {
  readonly engine: Engine;
  readonly databaseVersion: string | null;
  /** The service's VmHWM just before it was stopped: its peak RSS over the whole engine run. */
  readonly servicePeakRssBytes: number | null;
  readonly rowCheck: RowCheck | null;
}

export interface Failure {
  readonly stage: string;
  readonly message: string;
}

export function scenarioLabel(scenario: Scenario, engine: Engine | null): string {
  const on = engine === 'pglite' ? 'pglite' : 'postgres';
  switch (scenario) {
    case 'http-ceiling':
      return 'ceiling: bare node:http';
    case 'raw-insert':
      return engine === 'pglite' ? 'ceiling: raw INSERT, PGlite' : 'ceiling: raw INSERT, pg';
    case 'create':
      return `${on}: POST /plants`;
    case 'invalid-body':
      return `${on}: POST /plants invalid (400)`;
  }
}

export function findPoint<P extends Point>(
  points: readonly P[],
  scenario: Scenario,
  engine: Engine | null,
  concurrency: number,
): P | undefined {
  return points.find(
    (point) => point.scenario === scenario && point.engine === engine && point.concurrency === concurrency,
  );
}

export interface Ratios {
  /** The service's rate over the bare node:http rate at the same concurrency. */
  readonly toHttpCeiling: number | null;
  /** POST /plants over the raw INSERT rate on the same engine at the same concurrency. */
  readonly toDatabaseCeiling: number | null;
}

export function ratiosOf(point: Point, points: readonly Point[]): Ratios {
  if (point.scenario !== 'create' && point.scenario !== 'invalid-body') {
    return { toHttpCeiling: null, toDatabaseCeiling: null };
  }
  const rate = point.measurement.perSecond;
  const http = findPoint(points, 'http-ceiling', null, point.concurrency);
  const database =
    point.scenario === 'create' ? findPoint(points, 'raw-insert', point.engine, point.concurrency) : undefined;
  return {
    toHttpCeiling: http ? rate / http.measurement.perSecond : null,
    toDatabaseCeiling: database ? rate / database.measurement.perSecond : null,
  };
}
