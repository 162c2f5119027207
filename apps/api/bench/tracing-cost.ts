/**
 * What tracing costs the service: each point measured with tracing on (every span exported to a
 * local OTLP sink) beside the same point with tracing off, in the same rounds. Rates and latencies
 * are noisy on a shared machine; the service's CPU time per request is the steadier measure.
 */
import { formatMs, formatRate } from './figures.js';
import type { Engine } from './options.js';
import { findPoint, TRACED } from './results-model.js';
import type { EngineSummary, PointOverRounds } from './rounds.js';

export interface TracingCost {
  readonly engine: Engine;
  readonly path: 'create' | 'invalid-body';
  readonly concurrency: number;
  readonly off: PointOverRounds;
  readonly on: PointOverRounds;
  /** req/s with tracing on over req/s with it off (median rounds). */
  readonly rateRatio: number;
  /** The service's CPU time per request answered, in microseconds (median rounds); null when not measured. */
  readonly cpuMicrosecondsOff: number | null;
  readonly cpuMicrosecondsOn: number | null;
  /**
   * Spans the sink received per request the traced service answered, over every round (a few
   * readiness probes included); fewer than the request makes means spans were dropped.
   */
  readonly spansPerRequest: number | null;
}

export function compareTracing(points: readonly PointOverRounds[], engines: readonly EngineSummary[]): TracingCost[] {
  return points.flatMap((on) => {
    const path =
      on.scenario === 'create-traced' ? 'create' : on.scenario === 'invalid-body-traced' ? 'invalid-body' : null;
    const off = path === null ? undefined : findPoint(points, path, on.engine, on.concurrency);
    if (path === null || off === undefined || on.engine === null) return [];
    const exports = (engines.find((summary) => summary.engine === on.engine)?.tracedExports ?? []).filter(
      (exported) => exported.scenario === TRACED[path],
    );
    const requests = exports.reduce((total, exported) => total + exported.requests, 0);
    const spans = exports.reduce((total, exported) => total + exported.spans, 0);
    return [
      {
        engine: on.engine,
        path,
        concurrency: on.concurrency,
        off,
        on,
        rateRatio: on.measurement.perSecond / off.measurement.perSecond,
        cpuMicrosecondsOff: off.cpuMicrosPerRequest,
        cpuMicrosecondsOn: on.cpuMicrosPerRequest,
        spansPerRequest: requests === 0 ? null : spans / requests,
      },
    ];
  });
}

/** One line per compared point, for the summary. */
export function formatTracingCost(costs: readonly TracingCost[]): string[] {
  if (costs.length === 0) return [];
  const lines = ['', 'Tracing (every span exported to a local OTLP sink, http/protobuf, default batch settings):'];
  for (const cost of costs) {
    const { off, on } = cost;
    const path = cost.path === 'create' ? 'POST /plants' : 'invalid body (400)';
    const micros = (value: number | null) => (value === null ? '-' : value.toFixed(0));
    const extra =
      cost.cpuMicrosecondsOff === null || cost.cpuMicrosecondsOn === null
        ? ''
        : ` (${cost.cpuMicrosecondsOn >= cost.cpuMicrosecondsOff ? '+' : ''}${(cost.cpuMicrosecondsOn - cost.cpuMicrosecondsOff).toFixed(0)} µs)`;
    lines.push(
      `${cost.engine} c=${cost.concurrency} ${path}: ${formatRate(on.measurement.perSecond)} req/s on vs ` +
        `${formatRate(off.measurement.perSecond)} off (${cost.rateRatio.toFixed(2)}x), ` +
        `p50 ${formatMs(on.measurement.p50Ms)} vs ${formatMs(off.measurement.p50Ms)} ms, ` +
        `p99 ${formatMs(on.measurement.p99Ms)} vs ${formatMs(off.measurement.p99Ms)} ms, ` +
        `service CPU ${micros(cost.cpuMicrosecondsOn)} vs ${micros(cost.cpuMicrosecondsOff)} µs per request${extra}; ` +
        `${cost.spansPerRequest === null ? '-' : cost.spansPerRequest.toFixed(2)} spans exported per request`,
    );
  }
  return lines;
}
