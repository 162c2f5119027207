/**
 * Repeated rounds folded into one figure per point. On a small shared machine the same point
 * varies by 20-40% from one run to the next, so one measurement makes a ratio verdict a coin
 * flip; the median of a few rounds, taken round after round so that ceilings and service points
 * share the same stretches of noise, is steadier, and the spread shows how far to trust it.
 */
import type { Engine } from './options.js';
import type { EngineRun, Point, RowCheck, TracedExport } from './results-model.js';

/** Counts summed over every round of a point: an error in any round is an error. */
export interface RoundTotals {
  readonly completed: number;
  readonly non2xx: number;
  readonly unexpected: number;
  readonly errors: number;
  readonly timeouts: number;
}

/**
 * One point over all rounds. Its `measurement`, `cpu` and `connections` are the median round's
 * (all figures from one real run, so p50, p99 and CPU match the rate shown); `peakRssBytes` is
 * the highest of the rounds', since a peak that happened once did happen.
 */
export interface PointOverRounds extends Point {
  /** req/s of each round that measured this point, in round order. */
  readonly rounds: readonly number[];
  /** Index in `rounds` of the round reported. */
  readonly medianRound: number;
  readonly totals: RoundTotals;
}

/** An engine over all rounds (each round ran its own service on fresh storage). */
export interface EngineSummary {
  readonly engine: Engine;
  readonly databaseVersion: string | null;
  /** Rounds in which this engine's stage completed. */
  readonly rounds: number;
  /** The highest of the rounds' service VmHWM (tracing off). */
  readonly servicePeakRssBytes: number | null;
  /** The highest with tracing on; null when not measured. */
  readonly tracedServicePeakRssBytes: number | null;
  /** Every traced service run's exports, in round order. */
  readonly tracedExports: readonly TracedExport[];
  /** Each round's check that every 200 was a new row, in round order. */
  readonly rowChecks: readonly RowCheck[];
}

/**
 * The index of the median of `values`; for an even count the lower of the two middle values
 * (a round that was measured, never an average of two, and the cautious one for a rate).
 * Ties keep their order. -1 when `values` is empty.
 */
export function medianIndex(values: readonly number[]): number {
  const order = values.map((_, index) => index).sort((a, b) => (values[a] ?? 0) - (values[b] ?? 0) || a - b);
  return order[Math.floor((order.length - 1) / 2)] ?? -1;
}

/**
 * One point per (scenario, engine, concurrency) out of every round's points, in the order they
 * were first measured. A point a round did not measure (its stage failed) has fewer rounds.
 */
export function mergeRounds(rounds: readonly (readonly Point[])[]): PointOverRounds[] {
  const groups = new Map<string, Point[]>();
  for (const point of rounds.flat()) {
    const key = `${point.scenario}|${point.engine}|${point.concurrency}`;
    const group = groups.get(key);
    if (group) group.push(point);
    else groups.set(key, [point]);
  }
  return [...groups.values()].flatMap((group) => {
    const rates = group.map((point) => point.measurement.perSecond);
    const medianRound = medianIndex(rates);
    const median = group[medianRound];
    if (median === undefined) return [];
    const peaks = group.flatMap((point) => (point.peakRssBytes === null ? [] : [point.peakRssBytes]));
    const sum = (pick: (point: Point) => number) => group.reduce((total, point) => total + pick(point), 0);
    return [
      {
        ...median,
        peakRssBytes: peaks.length === 0 ? null : Math.max(...peaks),
        rounds: rates,
        medianRound,
        totals: {
          completed: sum((point) => point.measurement.completed),
          non2xx: sum((point) => point.measurement.non2xx),
          unexpected: sum((point) => point.measurement.unexpected),
          errors: sum((point) => point.measurement.errors),
          timeouts: sum((point) => point.measurement.timeouts),
        },
      },
    ];
  });
}

/** One summary per engine out of every round's runs, in the order the engines first ran. */
export function summarizeEngines(rounds: readonly (readonly EngineRun[])[]): EngineSummary[] {
  const groups = new Map<Engine, EngineRun[]>();
  for (const run of rounds.flat()) groups.set(run.engine, [...(groups.get(run.engine) ?? []), run]);
  return [...groups].map(([engine, runs]) => {
    const peaks = runs.flatMap((run) => (run.servicePeakRssBytes === null ? [] : [run.servicePeakRssBytes]));
    const tracedPeaks = runs.flatMap((run) =>
      run.tracedServicePeakRssBytes === null ? [] : [run.tracedServicePeakRssBytes],
    );
    return {
      engine,
      databaseVersion: runs.find((run) => run.databaseVersion !== null)?.databaseVersion ?? null,
      rounds: runs.length,
      servicePeakRssBytes: peaks.length === 0 ? null : Math.max(...peaks),
      tracedServicePeakRssBytes: tracedPeaks.length === 0 ? null : Math.max(...tracedPeaks),
      tracedExports: runs.flatMap((run) => run.tracedExports),
      rowChecks: runs.flatMap((run) => (run.rowCheck === null ? [] : [run.rowCheck])),
    };
  });
}
