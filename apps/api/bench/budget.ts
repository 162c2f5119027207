import { formatMegabytes, formatMs, formatRate } from './figures.js';
import type { Engine } from './options.js';
import { findPoint, ratiosOf } from './results-model.js';
import type { EngineSummary, PointOverRounds } from './rounds.js';

/** The performance budget (the production issue's, and the reads issue's), all at this concurrency. */
export const BUDGET_CONCURRENCY = 64;
const POSTGRES_MIN_RATIO_TO_RAW_INSERT = 1.0;
const POSTGRES_MAX_P99_MS = 50;
const PGLITE_MIN_RATIO_TO_RAW_INSERT = 0.8;
const INVALID_BODY_MIN_RATIO_TO_HTTP = 0.5;
const POSTGRES_MAX_PEAK_RSS_BYTES = 250 * 1024 * 1024;
const READ_MAX_P99_MS = 25;
/** Reads against their raw-driver ceilings: by id on PostgreSQL, a page on PostgreSQL, either on PGlite. */
const READ_MIN_RATIO = { postgres: { get: 0.6, list: 0.5 }, pglite: { get: 0.6, list: 0.6 } } as const;
/** The service's CPU per read, at most this many times its CPU per create (PostgreSQL). */
const READ_MAX_CPU_TO_CREATE = 1.3;

export type Verdict = 'PASS' | 'FAIL' | 'SKIP';

export interface BudgetLine {
  readonly verdict: Verdict;
  readonly target: string;
  /** The measured figures the verdict rests on, or why it could not be judged. */
  readonly detail: string;
}

/**
 * Rates, ratios and latencies are the median round's (ratios between median points); errors and
 * answers other than the expected one are summed over every round, so one bad round fails.
 */
export function evaluateBudget(points: readonly PointOverRounds[], engines: readonly EngineSummary[]): BudgetLine[] {
  const c = BUDGET_CONCURRENCY;
  const lines: BudgetLine[] = [];

  {
    const target = `postgres c=${c}: POST /plants >= ${POSTGRES_MIN_RATIO_TO_RAW_INSERT.toFixed(1)}x raw INSERT rate, p99 < ${POSTGRES_MAX_P99_MS} ms, no errors in any round`;
    const point = findPoint(points, 'create', 'postgres', c);
    const ratio = point && ratiosOf(point, points).toDatabaseCeiling;
    if (!point || ratio === null || ratio === undefined) {
      lines.push(skip(target, 'not measured (needs postgres and concurrency 64)'));
    } else {
      const m = point.measurement;
      const { non2xx, errors } = point.totals;
      lines.push({
        verdict:
          ratio >= POSTGRES_MIN_RATIO_TO_RAW_INSERT && m.p99Ms < POSTGRES_MAX_P99_MS && non2xx + errors === 0
            ? 'PASS'
            : 'FAIL',
        target,
        detail: `${ratio.toFixed(2)}x (${rateOf(point)}), p99 ${formatMs(m.p99Ms)} ms, ${non2xx} non-2xx, ${errors} socket errors/timeouts${overRounds(point)}`,
      });
    }
  }

  {
    const target = `pglite c=${c}: POST /plants >= ${PGLITE_MIN_RATIO_TO_RAW_INSERT.toFixed(1)}x raw PGlite insert rate`;
    const point = findPoint(points, 'create', 'pglite', c);
    const ratio = point && ratiosOf(point, points).toDatabaseCeiling;
    if (!point || ratio === null || ratio === undefined) {
      lines.push(skip(target, 'not measured (needs pglite and concurrency 64)'));
    } else {
      lines.push({
        verdict: ratio >= PGLITE_MIN_RATIO_TO_RAW_INSERT ? 'PASS' : 'FAIL',
        target,
        detail: `${ratio.toFixed(2)}x (${rateOf(point)})`,
      });
    }
  }

  for (const engine of ['postgres', 'pglite'] as const satisfies readonly Engine[]) {
    const target = `${engine} c=${c}: invalid body (400) >= ${Math.round(INVALID_BODY_MIN_RATIO_TO_HTTP * 100)}% of bare node:http rate, only 400s and no errors in any round`;
    const point = findPoint(points, 'invalid-body', engine, c);
    const ratio = point && ratiosOf(point, points).toHttpCeiling;
    if (!point || ratio === null || ratio === undefined) {
      lines.push(skip(target, `not measured (needs ${engine} and concurrency 64)`));
    } else {
      // Answers other than 400 (a 401, a 500) would measure something else: they fail the target.
      const { unexpected, errors } = point.totals;
      const clean = unexpected === 0 && errors === 0;
      lines.push({
        verdict: ratio >= INVALID_BODY_MIN_RATIO_TO_HTTP && clean ? 'PASS' : 'FAIL',
        target,
        detail: `${Math.round(ratio * 100)}% (${rateOf(point)})${clean ? '' : `, ${unexpected} answers other than 400, ${errors} errors${overRounds(point)}`}`,
      });
    }
  }

  for (const engine of ['postgres', 'pglite'] as const satisfies readonly Engine[]) {
    for (const scenario of ['get', 'list'] as const) {
      const minimum = READ_MIN_RATIO[engine][scenario];
      const what = scenario === 'get' ? 'GET /plants/{id}' : 'GET /plants?limit=20';
      const ceiling = scenario === 'get' ? 'raw SELECT by id' : 'raw page query';
      // The p99 and error targets are PostgreSQL's; on PGlite the ratio is the target.
      const strict = engine === 'postgres';
      const target =
        `${engine} c=${c}: ${what} >= ${minimum.toFixed(1)}x ${ceiling} rate` +
        (strict ? `, p99 < ${READ_MAX_P99_MS} ms, no errors in any round` : '');
      const point = findPoint(points, scenario, engine, c);
      const ratio = point && ratiosOf(point, points).toDatabaseCeiling;
      if (!point || ratio === null || ratio === undefined) {
        lines.push(skip(target, `not measured (needs ${engine} and concurrency 64)`));
        continue;
      }
      const m = point.measurement;
      const { non2xx, errors } = point.totals;
      const clean = non2xx + errors === 0;
      const holds = ratio >= minimum && (!strict || (m.p99Ms < READ_MAX_P99_MS && clean));
      lines.push({
        verdict: holds ? 'PASS' : 'FAIL',
        target,
        detail:
          `${ratio.toFixed(2)}x (${rateOf(point)})` +
          (strict
            ? `, p99 ${formatMs(m.p99Ms)} ms, ${non2xx} non-2xx, ${errors} socket errors/timeouts${overRounds(point)}`
            : ''),
      });
    }
  }

  {
    const create = findPoint(points, 'create', 'postgres', c);
    for (const scenario of ['get', 'list'] as const) {
      const what = scenario === 'get' ? 'GET /plants/{id}' : 'GET /plants?limit=20';
      const target = `postgres c=${c}: service CPU per ${what} <= ${READ_MAX_CPU_TO_CREATE}x its CPU per create`;
      const read = findPoint(points, scenario, 'postgres', c);
      const readCpu = read?.cpuMicrosPerRequest ?? null;
      const createCpu = create?.cpuMicrosPerRequest ?? null;
      if (readCpu === null || createCpu === null) {
        lines.push(skip(target, 'not measured (needs postgres and concurrency 64)'));
        continue;
      }
      const ratio = readCpu / createCpu;
      lines.push({
        verdict: ratio <= READ_MAX_CPU_TO_CREATE ? 'PASS' : 'FAIL',
        target,
        detail: `${ratio.toFixed(2)}x (${Math.round(readCpu)} us against ${Math.round(createCpu)} us per request)`,
      });
    }
  }

  {
    const target = `postgres: service peak RSS < ${POSTGRES_MAX_PEAK_RSS_BYTES / 1024 / 1024} MB`;
    const summary = engines.find((engine) => engine.engine === 'postgres');
    const peak = summary?.servicePeakRssBytes ?? null;
    if (summary === undefined || peak === null) {
      lines.push(skip(target, 'not measured (needs postgres on Linux)'));
    } else {
      // Each round runs its own service: the budget holds only if it held in every one.
      const of = summary.rounds > 1 ? `, highest of ${summary.rounds} rounds` : '';
      lines.push({
        verdict: peak < POSTGRES_MAX_PEAK_RSS_BYTES ? 'PASS' : 'FAIL',
        target,
        detail: `${formatMegabytes(peak)} MB (VmHWM over the whole run, reads and creates${of})`,
      });
    }
  }
  return lines;
}

/** `7,872 req/s`, and `median of 3 rounds` when there were several. */
function rateOf(point: PointOverRounds): string {
  const rate = `${formatRate(point.measurement.perSecond)} req/s`;
  return point.rounds.length > 1 ? `${rate}, median of ${point.rounds.length} rounds` : rate;
}

function overRounds(point: PointOverRounds): string {
  return point.rounds.length > 1 ? ` summed over ${point.rounds.length} rounds` : '';
}

function skip(target: string, detail: string): BudgetLine {
  return { verdict: 'SKIP', target, detail };
}
