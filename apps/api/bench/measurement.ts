import type { RecordableHistogram } from 'node:perf_hooks';

/** One measured point: what a load generator (or an insert loop) saw over a fixed duration. */
export interface Measurement {
  /** Completed requests (or inserts) per second over the measured window. */
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Completed requests or inserts, whatever their status. */
  readonly completed: number;
  readonly non2xx: number;
  /** Answers with another status than the scenario expects (200, or 400 for the invalid body). */
  readonly unexpected: number;
  /** Socket errors and timeouts (HTTP), failed queries (raw inserts). */
  readonly errors: number;
  readonly timeouts: number;
  readonly statusCodes: Readonly<Record<string, number>>;
  readonly seconds: number;
}

/** Latencies are recorded in microseconds: autocannon's own histogram rounds to whole milliseconds. */
export function microsecondsToMs(histogram: RecordableHistogram, percentile: number): number {
  return histogram.count === 0 ? Number.NaN : histogram.percentile(percentile) / 1000;
}
