import { type Column, formatColumns, formatMegabytes, formatRate } from './figures.js';
import type { Engine } from './options.js';
import type { MachineInfo } from './report.js';

/** What `pnpm bench -- --plants N` measures on each size, in this order. */
export const SCALE_ROWS = ['create', 'get', 'list', 'list-tag', 'invalid-body', 'fan-out'] as const;
export type ScaleRow = (typeof SCALE_ROWS)[number];

const ROW_LABELS: Readonly<Record<ScaleRow, string>> = {
  create: 'POST /plants (creates/s)',
  get: 'GET /plants/{id}, random ids',
  list: 'GET /plants?limit=20, random cursors',
  'list-tag': 'GET /plants?limit=20&tag=, random cursors',
  'invalid-body': 'POST /plants, invalid body (400)',
  'fan-out': 'fan-out to 10 subscriptions (deliveries/s)',
};

/** Every rate at N plants at least this share of its rate at 10,000 (issue 30). */
export const SCALE_MIN_RATIO = 0.8;
/** The service's peak RSS on PostgreSQL, import included. */
export const SCALE_MAX_RSS_BYTES = 250 * 1024 * 1024;

export interface ScaleEngineResult {
  readonly engine: Engine;
  readonly plants: number;
  /** Median rounds of each row at the two sizes (requests or deliveries per second). */
  readonly rows: ReadonlyArray<{
    readonly row: ScaleRow;
    readonly small: number;
    readonly large: number;
    readonly rounds: number;
    /** Answers other than the row's status (503s under load), over every round, at each size. */
    readonly smallUnexpected: number;
    readonly largeUnexpected: number;
  }>;
  readonly importSeconds: { readonly small: number; readonly large: number };
  readonly peakRss: { readonly small: number; readonly large: number; readonly largeImport: number | undefined };
  readonly databaseBytes: number;
  /** The embedded database: a start with N plants until /readyz answers 200. */
  openSeconds?: number;
  /** The statement-plan test's verdict and summary at the bench's size. */
  plans?: { readonly rows: number; readonly passed: boolean; readonly summary: string };
}

export interface ScaleReport {
  readonly machine: MachineInfo;
  readonly plants: number;
  readonly concurrency: number;
  readonly rounds: number;
  /** The bare node:http server's rate at the same concurrency (median of the rounds). */
  readonly httpPerSecond: number;
  readonly engines: readonly ScaleEngineResult[];
}

const COLUMNS: readonly Column[] = [
  ['engine', 'left'],
  ['row', 'left'],
  ['at 10,000', 'right'],
  ['at N', 'right'],
  ['N / 10,000', 'right'],
  ['target', 'right'],
  ['unexpected', 'right'],
];

export function formatScaleReport(report: ScaleReport): string {
  const n = report.plants.toLocaleString('en-US');
  const rows = report.engines.flatMap((result) =>
    result.rows.map((row) => {
      const ratio = row.small > 0 ? row.large / row.small : Number.NaN;
      return [
        result.engine,
        ROW_LABELS[row.row],
        formatRate(row.small),
        formatRate(row.large),
        ratio.toFixed(2),
        `>= ${SCALE_MIN_RATIO}: ${ratio >= SCALE_MIN_RATIO ? 'PASS' : 'FAIL'}`,
        `${row.smallUnexpected} / ${row.largeUnexpected}`,
      ];
    }),
  );
  const lines = [
    `Plants: 10,000 and N = ${n}; c=${report.concurrency}; median of ${report.rounds} round(s), each row measured at both sizes in turn.`,
    `Machine: ${report.machine.cpus} x ${report.machine.cpuModel}, load ${report.machine.loadAverageAtStart} at start; bare node:http ${formatRate(report.httpPerSecond)}/s at c=${report.concurrency}; commit ${report.machine.gitCommit ?? '-'}`,
    '',
    formatColumns(COLUMNS, rows, (index) => index > 0 && rows[index]?.[0] !== rows[index - 1]?.[0]),
    '',
  ];
  for (const result of report.engines) {
    const rss = result.peakRss;
    const rssVerdict =
      result.engine === 'postgres'
        ? ` (budget ${formatMegabytes(SCALE_MAX_RSS_BYTES)} MB: ${rss.large <= SCALE_MAX_RSS_BYTES ? 'PASS' : 'FAIL'})`
        : '';
    lines.push(
      `${result.engine}: import of 10,000 in ${result.importSeconds.small.toFixed(1)} s, of ${n} in ` +
        `${result.importSeconds.large.toFixed(1)} s (${formatRate(result.plants / result.importSeconds.large)}/s); ` +
        `database ${formatMegabytes(result.databaseBytes)} MB on disk with ${n}; peak RSS ${formatMegabytes(rss.small)} MB ` +
        `at 10,000, ${formatMegabytes(rss.large)} MB at ${n}${rss.largeImport === undefined ? '' : ` (import ${formatMegabytes(rss.largeImport)} MB)`}${rssVerdict}` +
        `${result.openSeconds === undefined ? '' : `; opens with ${n} in ${result.openSeconds.toFixed(1)} s`}`,
    );
    if (result.plans) {
      lines.push(
        `${result.engine}: statement plans at ${result.plans.rows.toLocaleString('en-US')} rows: ${result.plans.passed ? 'PASS' : 'FAIL'} (${result.plans.summary})`,
      );
    }
  }
  return lines.join('\n');
}
