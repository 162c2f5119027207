import { cpus, loadavg, release, totalmem } from 'node:os';
import type { BudgetLine } from './budget.js';
import { formatCpu, formatMegabytes, formatMs, formatRate } from './figures.js';
import type { BenchOptions } from './options.js';
import { type EngineRun, type Failure, type Point, ratiosOf, scenarioLabel } from './results-model.js';

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

const COLUMNS = [
  ['scenario', 'left'],
  ['conc', 'right'],
  ['req/s', 'right'],
  ['p50 ms', 'right'],
  ['p99 ms', 'right'],
  ['non-2xx', 'right'],
  ['unexpected', 'right'],
  ['errors', 'right'],
  ['peak RSS MB', 'right'],
  ['CPU% srv/gen/all', 'right'],
  ['x http', 'right'],
  ['x db', 'right'],
] as const;

/** One row per scenario and concurrency; ratios against the ceilings at the same concurrency. */
export function formatTable(points: readonly Point[]): string {
  const rows = points.map((point) => {
    const m = point.measurement;
    const ratios = ratiosOf(point, points);
    return [
      scenarioLabel(point.scenario, point.engine),
      String(point.concurrency),
      formatRate(m.perSecond),
      formatMs(m.p50Ms),
      formatMs(m.p99Ms),
      point.scenario === 'raw-insert' ? '-' : String(m.non2xx),
      point.scenario === 'raw-insert' ? '-' : String(m.unexpected),
      String(m.errors),
      point.peakRssBytes === null ? '-' : formatMegabytes(point.peakRssBytes),
      formatCpu(point.cpu),
      ratios.toHttpCeiling === null ? '' : `${ratios.toHttpCeiling.toFixed(2)}x`,
      ratios.toDatabaseCeiling === null ? '' : `${ratios.toDatabaseCeiling.toFixed(2)}x`,
    ];
  });
  const widths = COLUMNS.map(([title], index) => Math.max(title.length, ...rows.map((row) => row[index]?.length ?? 0)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, index) => {
        const width = widths[index] ?? 0;
        return COLUMNS[index]?.[1] === 'left' ? cell.padEnd(width) : cell.padStart(width);
      })
      .join('  ')
      .trimEnd();
  const separator = widths.map((width) => '-'.repeat(width)).join('  ');
  const body: string[] = [];
  rows.forEach((row, index) => {
    // A blank line between groups (scenario, engine) keeps them readable.
    const [current, previous] = [points[index], points[index - 1]];
    if (previous && (current?.scenario !== previous.scenario || current?.engine !== previous.engine)) body.push('');
    body.push(line(row));
  });
  return [line(COLUMNS.map(([title]) => title)), separator, ...body].join('\n');
}

export function formatSummary(
  machine: MachineInfo,
  options: BenchOptions,
  runs: readonly EngineRun[],
  budget: readonly BudgetLine[],
  failures: readonly Failure[],
): string {
  const lines: string[] = [];
  for (const run of runs) {
    const peak = run.servicePeakRssBytes === null ? '-' : `${formatMegabytes(run.servicePeakRssBytes)} MB`;
    const check = run.rowCheck;
    const rows =
      check === null
        ? 'rows not checked'
        : `${check.rows ?? '?'} rows in plants for ${check.created} creates answered 200 (+ up to ${check.unanswered} ` +
          `unanswered at the end of runs)${check.ok ? '' : ' MISMATCH: not every 200 was a new row'}`;
    const version = run.databaseVersion?.split(' on ')[0] ?? 'version unknown';
    lines.push(`${run.engine} (${version}): service peak RSS (VmHWM) ${peak}; ${rows}`);
  }
  lines.push('', 'Budget:');
  for (const item of budget) lines.push(`${item.verdict}  ${item.target}: ${item.detail}`);
  for (const failure of failures) lines.push(`ERROR  ${failure.stage}: ${failure.message}`);
  lines.push(
    '',
    `${machine.cpus} CPUs (${machine.cpuModel}), ${machine.totalMemoryMB} MB, ${machine.os}, Node ${machine.node}; ` +
      `${options.durationSeconds} s per point after ${options.warmupSeconds} s of warm-up; the load generator, ` +
      'the process under test and PostgreSQL share these CPUs.',
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

export interface JsonReport {
  readonly date: string;
  readonly machine: MachineInfo;
  readonly settings: Record<string, unknown>;
  readonly points: readonly Record<string, unknown>[];
  readonly engines: readonly Record<string, unknown>[];
  readonly budget: readonly BudgetLine[];
  readonly failures: readonly Failure[];
}

export function toJsonReport(
  date: Date,
  machine: MachineInfo,
  options: BenchOptions,
  points: readonly Point[],
  runs: readonly EngineRun[],
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
      engines: options.engines,
      rawInsertPool: `min(concurrency, ${options.rawPoolCap}) connections`,
      servicePoolSize: options.servicePoolSize ?? 'service default (DATABASE_POOL_SIZE unset)',
      service: 'node dist/index.js, NODE_ENV=production, LOG_LEVEL=warn',
      latency: 'per response, microsecond resolution, warm-up excluded',
      cpu: 'percent of one core over the measured window: server (service or bare HTTP server), load generator (autocannon in the bench process, or the raw insert loop), machine (all processes)',
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
        p50Ms: round(m.p50Ms, 3),
        p99Ms: round(m.p99Ms, 3),
        completed: m.completed,
        seconds: round(m.seconds, 3),
        non2xx: m.non2xx,
        unexpected: m.unexpected,
        errors: m.errors,
        timeouts: m.timeouts,
        statusCodes: m.statusCodes,
        peakRssMB: point.peakRssBytes === null ? null : round(point.peakRssBytes / 1024 / 1024, 1),
        cpuPercentOfOneCore: point.cpu,
        ratioToHttpCeiling: ratios.toHttpCeiling === null ? null : round(ratios.toHttpCeiling, 3),
        ratioToDatabaseCeiling: ratios.toDatabaseCeiling === null ? null : round(ratios.toDatabaseCeiling, 3),
        ...(point.connections === undefined ? {} : { connections: point.connections }),
      };
    }),
    engines: runs.map((run) => ({
      engine: run.engine,
      databaseVersion: run.databaseVersion,
      servicePeakRssMB: run.servicePeakRssBytes === null ? null : round(run.servicePeakRssBytes / 1024 / 1024, 1),
      rowCheck: run.rowCheck,
    })),
    budget,
    failures,
  };
}

function round(value: number, digits: number): number | null {
  if (!Number.isFinite(value)) return null;
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
