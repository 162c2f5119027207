import { cpus, loadavg, release, totalmem } from 'node:os';
import { BUDGET_CONCURRENCY, type BudgetLine } from './budget.js';
import { compareWithFastify, formatFastifyComparison } from './fastify-comparison.js';
import {
  type Column,
  formatColumns,
  formatCpu,
  formatMegabytes,
  formatMicros,
  formatMs,
  formatRate,
} from './figures.js';
import type { BenchOptions } from './options.js';
import { type Failure, findPoint, type RowCheck, ratiosOf, scenarioLabel } from './results-model.js';
import type { EngineSummary, PointOverRounds } from './rounds.js';
import { compareTracing, formatTracingCost } from './tracing-cost.js';

export interface MachineInfo {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly totalMemoryMB: number;
  readonly os: string;
  readonly node: string;
  readonly gitCommit: string | null;
  /** 1-minute load average when the run started: other work on the machine skews every figure. */
  readonly loadAverageAtStart: number;
}

export function describeMachine(gitCommit: string | null): MachineInfo {
  const all = cpus();
  return {
    cpus: all.length,
    cpuModel: all[0]?.model.trim() ?? 'unknown',
    totalMemoryMB: Math.round(totalmem() / 1024 / 1024),
    os: `${process.platform} ${release()} ${process.arch}`,
    node: process.version,
    gitCommit,
    loadAverageAtStart: round(loadavg()[0] ?? 0, 2) ?? 0,
  };
}

/** Shown only when a point had several rounds: with one, it would repeat req/s. */
const SPREAD_TITLE = 'rounds min-max';

const COLUMNS: readonly Column[] = [
  ['scenario', 'left'],
  ['conc', 'right'],
  ['req/s', 'right'],
  [SPREAD_TITLE, 'right'],
  ['p50 ms', 'right'],
  ['p99 ms', 'right'],
  ['non-2xx', 'right'],
  ['unexpected', 'right'],
  ['errors', 'right'],
  ['peak RSS MB', 'right'],
  ['CPU% srv/gen/all', 'right'],
  ['CPU us/req', 'right'],
  ['x http', 'right'],
  ['x db', 'right'],
];

/**
 * One row per scenario and concurrency, each the point's median round; ratios against the
 * ceilings (their median rounds) at the same concurrency. With several rounds, a column shows
 * the lowest and highest req/s of the rounds, and `n=2` where a point has fewer than the others.
 */
export function formatTable(points: readonly PointOverRounds[]): string {
  const mostRounds = Math.max(0, ...points.map((point) => point.rounds.length));
  const shown = (_: unknown, index: number) => COLUMNS[index]?.[0] !== SPREAD_TITLE || mostRounds > 1;
  const columns = COLUMNS.filter(shown);
  const rows = points.map((point) => {
    const m = point.measurement;
    const ratios = ratiosOf(point, points);
    return [
      scenarioLabel(point.scenario, point.engine),
      String(point.concurrency),
      formatRate(m.perSecond),
      formatSpread(point.rounds, mostRounds),
      formatMs(m.p50Ms),
      formatMs(m.p99Ms),
      // The database ceilings answer no HTTP status.
      point.scenario.startsWith('raw-') ? '-' : String(m.non2xx),
      point.scenario.startsWith('raw-') ? '-' : String(m.unexpected),
      String(m.errors),
      point.peakRssBytes === null ? '-' : formatMegabytes(point.peakRssBytes),
      formatCpu(point.cpu),
      formatMicros(point.cpuMicrosPerRequest),
      ratios.toHttpCeiling === null ? '' : `${ratios.toHttpCeiling.toFixed(2)}x`,
      ratios.toDatabaseCeiling === null ? '' : `${ratios.toDatabaseCeiling.toFixed(2)}x`,
    ].filter(shown);
  });
  // A blank line between groups (scenario, engine) keeps them readable.
  return formatColumns(columns, rows, (index) => {
    const [current, previous] = [points[index], points[index - 1]];
    return previous !== undefined && (current?.scenario !== previous.scenario || current?.engine !== previous.engine);
  });
}

/** `20,512-33,010`: the rounds' lowest and highest rate. */
function formatSpread(rates: readonly number[], mostRounds: number): string {
  const spread = `${formatRate(Math.min(...rates))}-${formatRate(Math.max(...rates))}`;
  return rates.length < mostRounds ? `${spread} n=${rates.length}` : spread;
}

export function formatSummary(
  machine: MachineInfo,
  options: BenchOptions,
  points: readonly PointOverRounds[],
  engines: readonly EngineSummary[],
  budget: readonly BudgetLine[],
  failures: readonly Failure[],
): string {
  const lines: string[] = [];
  for (const engine of engines) {
    const traced = engine.tracedServicePeakRssBytes;
    const peak =
      (engine.servicePeakRssBytes === null ? '-' : `${formatMegabytes(engine.servicePeakRssBytes)} MB`) +
      (traced === null ? '' : ` (tracing on: ${formatMegabytes(traced)} MB)`);
    const highest = engine.rounds > 1 ? `, highest of ${engine.rounds} rounds` : '';
    const version = engine.databaseVersion?.split(' on ')[0] ?? 'version unknown';
    lines.push(
      `${engine.engine} (${version}): service peak RSS (VmHWM${highest}) ${peak}; ${describeRowChecks(engine)}`,
    );
  }
  lines.push(...formatTracingCost(compareTracing(points, engines)));
  const http = findPoint(points, 'http-ceiling', null, BUDGET_CONCURRENCY)?.measurement.perSecond ?? null;
  lines.push(...formatFastifyComparison(compareWithFastify(points), http));
  lines.push('', 'Budget:');
  for (const item of budget) lines.push(`${item.verdict}  ${item.target}: ${item.detail}`);
  for (const failure of failures) lines.push(`ERROR  ${failure.stage}: ${failure.message}`);
  lines.push(
    '',
    `${machine.cpus} CPUs (${machine.cpuModel}), ${machine.totalMemoryMB} MB, ${machine.os}, Node ${machine.node}; ` +
      `${options.durationSeconds} s per point after ${options.warmupSeconds} s of warm-up${describeRounds(options.rounds)}; ` +
      'the load generator, the process under test and PostgreSQL share these CPUs.',
  );
  // Only the load before the run tells of other work: during it, the bench itself loads every CPU.
  if (machine.loadAverageAtStart > machine.cpus * 0.75) {
    lines.push(
      `WARNING: the machine was busy before the run (1-min load average ${machine.loadAverageAtStart.toFixed(1)} ` +
        `on ${machine.cpus} CPUs): other processes may have taken CPU from it; figures are low and noisy.`,
    );
  }
  return lines.join('\n');
}

/** Each round checks its own storage; the counts are summed, and a mismatch in any round is shown. */
function describeRowChecks(engine: EngineSummary): string {
  const checks = engine.rowChecks;
  if (checks.length === 0) return 'rows not checked';
  const sum = (pick: (check: RowCheck) => number) => checks.reduce((total, check) => total + pick(check), 0);
  const rows = checks.some((check) => check.rows === null) ? '?' : String(sum((check) => check.rows ?? 0));
  const failed = checks.filter((check) => !check.ok).length;
  const summed = checks.length > 1 ? `, summed over ${checks.length} rounds, each checked on its own` : '';
  const mismatch =
    failed === 0
      ? ''
      : ` MISMATCH${checks.length > 1 ? ` in ${failed} of ${checks.length} rounds` : ''}: not every 200 was a new row`;
  return (
    `${rows} rows in plants for ${sum((check) => check.created)} creates answered 200 (+ up to ` +
    `${sum((check) => check.unanswered)} unanswered at the end of runs)${summed}${mismatch}`
  );
}

function describeRounds(rounds: number): string {
  return rounds > 1
    ? `, ${rounds} rounds: each point is its median-req/s round (the lower middle one for an even count)`
    : '';
}

export interface JsonReport {
  readonly date: string;
  readonly machine: MachineInfo;
  readonly settings: Record<string, unknown>;
  readonly points: readonly Record<string, unknown>[];
  readonly engines: readonly Record<string, unknown>[];
  readonly budget: readonly BudgetLine[];
  readonly tracing: readonly Record<string, unknown>[];
  readonly fastifyComparison: readonly Record<string, unknown>[];
  readonly failures: readonly Failure[];
}

export function toJsonReport(
  date: Date,
  machine: MachineInfo,
  options: BenchOptions,
  points: readonly PointOverRounds[],
  engines: readonly EngineSummary[],
  budget: readonly BudgetLine[],
  failures: readonly Failure[],
): JsonReport {
  return {
    date: date.toISOString(),
    machine,
    settings: {
      durationSeconds: options.durationSeconds,
      warmupSeconds: options.warmupSeconds,
      concurrencies: options.concurrencies,
      rounds: options.rounds,
      engines: options.engines,
      rawDriverPool: `min(concurrency, ${options.rawPoolCap}) connections`,
      servicePoolSize: options.servicePoolSize ?? 'service default (DATABASE_POOL_SIZE unset)',
      service:
        'node dist/index.js, NODE_ENV=production, access lines at LOG_LEVEL info (the default), metrics on; the "no access log" rows: LOG_LEVEL=warn',
      reference:
        'the reference-* scenarios (PostgreSQL, budget concurrency): bench/ceilings/koa-reference.ts, Koa with @koa/router, koa-bodyparser and pg (pool as the raw driver ceilings), one statement a request, a fixed-string token compare (reference-bad-token: a made-up token, 401); no rate limit, access line, metrics, request id or batching',
      fastifyReference:
        "the fastify-* scenarios (both engines, budget concurrency, after the service on the same database): bench/ceilings/fastify-reference-app.ts, Fastify 5 with Ajv validators and fast-json-stringify serializers built from openapi.json, the service's own statements (pg pool as the raw driver ceilings, named; or PGlite in process), one statement a request, a fixed-string token compare; no rate limit, access line, metrics, request id or batching",
      badToken:
        'bad-token: POST /plants with a made-up well-formed token (401), the service started with AUTH_FAILURE_LIMIT=off (at the default 20/60 the bench address would get 429s)',
      reads:
        'GET /plants/{id}: random ids of 10,000 plants created first; GET /plants?limit=20: random after cursors among them, half with one of their 10 tags',
      latency: 'per response, microsecond resolution, warm-up excluded',
      method:
        "the whole sequence runs once per round; each point's figures (latency, counts, CPU, ratios) are its round " +
        "with the median req/s (the lower middle one for an even count); rounds lists every round's req/s, " +
        'medianRoundIndex the one reported, totals the counts summed over all rounds, peakRssMB the highest of the rounds',
      cpu: 'percent of one core over the measured window: server (service or bare HTTP server), load generator (autocannon in the bench process, or the raw insert loop), machine (all processes)',
      tracing:
        options.tracingConcurrencies.length === 0
          ? 'not measured'
          : `the *-traced scenarios at concurrency ${options.tracingConcurrencies.join(', ')}: the same requests to a service with OTEL_EXPORTER_OTLP_ENDPOINT set to a local OTLP sink process (http/protobuf, default sampler and batch settings: every span exported); off and on alternate order from round to round`,
    },
    points: points.map((point) => {
      const ratios = ratiosOf(point, points);
      const m = point.measurement;
      return {
        scenario: point.scenario,
        label: scenarioLabel(point.scenario, point.engine),
        engine: point.engine,
        concurrency: point.concurrency,
        perSecond: round(m.perSecond, 1),
        rounds: point.rounds.map((rate) => round(rate, 1)),
        medianRoundIndex: point.medianRound,
        p50Ms: round(m.p50Ms, 3),
        p99Ms: round(m.p99Ms, 3),
        completed: m.completed,
        seconds: round(m.seconds, 3),
        non2xx: m.non2xx,
        unexpected: m.unexpected,
        errors: m.errors,
        timeouts: m.timeouts,
        statusCodes: m.statusCodes,
        totals: point.totals,
        peakRssMB: point.peakRssBytes === null ? null : round(point.peakRssBytes / 1024 / 1024, 1),
        cpuPercentOfOneCore: {
          server: point.cpu.server,
          loadGenerator: point.cpu.loadGenerator,
          machine: point.cpu.machine,
        },
        cpuMicrosPerRequest: point.cpuMicrosPerRequest === null ? null : round(point.cpuMicrosPerRequest, 1),
        ratioToHttpCeiling: ratios.toHttpCeiling === null ? null : round(ratios.toHttpCeiling, 3),
        ratioToDatabaseCeiling: ratios.toDatabaseCeiling === null ? null : round(ratios.toDatabaseCeiling, 3),
        ...(point.connections === undefined ? {} : { connections: point.connections }),
      };
    }),
    engines: engines.map((engine) => ({
      engine: engine.engine,
      databaseVersion: engine.databaseVersion,
      rounds: engine.rounds,
      servicePeakRssMB: engine.servicePeakRssBytes === null ? null : round(engine.servicePeakRssBytes / 1024 / 1024, 1),
      tracedServicePeakRssMB:
        engine.tracedServicePeakRssBytes === null ? null : round(engine.tracedServicePeakRssBytes / 1024 / 1024, 1),
      tracedExports: engine.tracedExports,
      rowChecks: engine.rowChecks,
    })),
    budget,
    tracing: compareTracing(points, engines).map((cost) => ({
      engine: cost.engine,
      path: cost.path,
      concurrency: cost.concurrency,
      perSecondOff: round(cost.off.measurement.perSecond, 1),
      perSecondOn: round(cost.on.measurement.perSecond, 1),
      rateRatio: round(cost.rateRatio, 3),
      p50MsOff: round(cost.off.measurement.p50Ms, 3),
      p50MsOn: round(cost.on.measurement.p50Ms, 3),
      p99MsOff: round(cost.off.measurement.p99Ms, 3),
      p99MsOn: round(cost.on.measurement.p99Ms, 3),
      serviceCpuMicrosecondsPerRequestOff: cost.cpuMicrosecondsOff === null ? null : round(cost.cpuMicrosecondsOff, 1),
      serviceCpuMicrosecondsPerRequestOn: cost.cpuMicrosecondsOn === null ? null : round(cost.cpuMicrosecondsOn, 1),
      spansExportedPerRequest: cost.spansPerRequest === null ? null : round(cost.spansPerRequest, 3),
    })),
    fastifyComparison: compareWithFastify(points).map((row) => ({
      engine: row.engine,
      scenario: row.scenario,
      label: row.label,
      concurrency: BUDGET_CONCURRENCY,
      servicePerSecond: round(row.servicePerSecond, 1),
      fastifyPerSecond: round(row.referencePerSecond, 1),
      ratio: round(row.ratio, 3),
      roundRatios: row.roundRatios.map((ratio) => round(ratio, 3)),
      serviceCpuMicrosPerRequest: row.serviceCpuMicros === null ? null : round(row.serviceCpuMicros, 1),
      fastifyCpuMicrosPerRequest: row.referenceCpuMicros === null ? null : round(row.referenceCpuMicros, 1),
      serviceToHttpCeiling: row.serviceToHttp === null ? null : round(row.serviceToHttp, 3),
      fastifyToHttpCeiling: row.referenceToHttp === null ? null : round(row.referenceToHttp, 3),
      minimalKoaToFastify: row.minimalKoaRatio === null ? null : round(row.minimalKoaRatio, 3),
    })),
    failures,
  };
}

function round(value: number, digits: number): number | null {
  if (!Number.isFinite(value)) return null;
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
