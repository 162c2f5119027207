import { formatMegabytes, formatMs, formatRate } from './figures.js';
import type { Engine } from './options.js';
import { type EngineRun, findPoint, type Point, ratiosOf } from './results-model.js';

/** The performance budget (from the production issue), all at this concurrency. */
export const BUDGET_CONCURRENCY = 64;
const POSTGRES_MIN_RATIO_TO_RAW_INSERT = 1.0;
const POSTGRES_MAX_P99_MS = 50;
const PGLITE_MIN_RATIO_TO_RAW_INSERT = 0.8;
const INVALID_BODY_MIN_RATIO_TO_HTTP = 0.5;
const POSTGRES_MAX_PEAK_RSS_BYTES = 250 * 1024 * 1024;

export type Verdict = 'PASS' | 'FAIL' | 'SKIP';

export interface BudgetLine {
  readonly verdict: Verdict;
  readonly target: string;
  /** The measured figures the verdict rests on, or why it could not be judged. */
  readonly detail: string;
}

export function evaluateBudget(points: readonly Point[], runs: readonly EngineRun[]): BudgetLine[] {
  const c = BUDGET_CONCURRENCY;
  const lines: BudgetLine[] = [];

  {
    const target = `postgres c=${c}: POST /plants >= ${POSTGRES_MIN_RATIO_TO_RAW_INSERT.toFixed(1)}x raw INSERT rate, p99 < ${POSTGRES_MAX_P99_MS} ms, no errors`;
    const point = findPoint(points, 'create', 'postgres', c);
    const ratio = point && ratiosOf(point, points).toDatabaseCeiling;
    if (!point || ratio === null || ratio === undefined) {
      lines.push(skip(target, 'not measured (needs postgres and concurrency 64)'));
    } else {
      const m = point.measurement;
      const errors = m.non2xx + m.errors;
      lines.push({
        verdict:
          ratio >= POSTGRES_MIN_RATIO_TO_RAW_INSERT && m.p99Ms < POSTGRES_MAX_P99_MS && errors === 0 ? 'PASS' : 'FAIL',
        target,
        detail: `${ratio.toFixed(2)}x (${formatRate(m.perSecond)} req/s), p99 ${formatMs(m.p99Ms)} ms, ${m.non2xx} non-2xx, ${m.errors} socket errors/timeouts`,
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
        detail: `${ratio.toFixed(2)}x (${formatRate(point.measurement.perSecond)} req/s)`,
      });
    }
  }

  for (const engine of ['postgres', 'pglite'] as const satisfies readonly Engine[]) {
    const target = `${engine} c=${c}: invalid body (400) >= ${Math.round(INVALID_BODY_MIN_RATIO_TO_HTTP * 100)}% of bare node:http rate`;
    const point = findPoint(points, 'invalid-body', engine, c);
    const ratio = point && ratiosOf(point, points).toHttpCeiling;
    if (!point || ratio === null || ratio === undefined) {
      lines.push(skip(target, `not measured (needs ${engine} and concurrency 64)`));
    } else {
      // Answers other than 400 (a 401, a 500) would measure something else: they fail the target.
      const m = point.measurement;
      const clean = m.unexpected === 0 && m.errors === 0;
      lines.push({
        verdict: ratio >= INVALID_BODY_MIN_RATIO_TO_HTTP && clean ? 'PASS' : 'FAIL',
        target,
        detail: `${Math.round(ratio * 100)}% (${formatRate(m.perSecond)} req/s)${clean ? '' : `, ${m.unexpected} answers other than 400, ${m.errors} errors`}`,
      });
    }
  }

  {
    const target = `postgres: service peak RSS < ${POSTGRES_MAX_PEAK_RSS_BYTES / 1024 / 1024} MB`;
    const peak = runs.find((run) => run.engine === 'postgres')?.servicePeakRssBytes;
    if (peak === null || peak === undefined) {
      lines.push(skip(target, 'not measured (needs postgres on Linux)'));
    } else {
      lines.push({
        verdict: peak < POSTGRES_MAX_PEAK_RSS_BYTES ? 'PASS' : 'FAIL',
        target,
        detail: `${formatMegabytes(peak)} MB (VmHWM over the whole run)`,
      });
    }
  }
  return lines;
}

function skip(target: string, detail: string): BudgetLine {
  return { verdict: 'SKIP', target, detail };
}
