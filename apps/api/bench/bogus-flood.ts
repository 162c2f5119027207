/**
 * `pnpm bench -- --bogus-flood`: what a flood of well-formed made-up bearer tokens from one client
 * does to everyone else. Per engine and round, on a fresh service (production settings) with a
 * read set: authenticated `GET /plants/{id}` at a fixed moderate rate alone, then the same while
 * a separate process sends distinct made-up tokens at a fixed rate from 127.0.0.1; once with the
 * failed-authentication limit at its default and once with it off (every made-up token then costs
 * a database lookup). Prints the rows (medians of the rounds) and the ratio of the loaded to the
 * unloaded p99, and writes them as JSON (bench/results/bogus-flood.json).
 */
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { randomReadId } from './bench-plants.js';
import { createBenchStorage } from './bench-storage.js';
import { type CpuShare, startCpuWindow } from './cpu-usage.js';
import { type Cleanups, gitCommit } from './entry-point.js';
import { type Column, formatColumns, formatMs, formatRate } from './figures.js';
import { measureHttp } from './http-load.js';
import type { Measurement } from './measurement.js';
import type { BenchOptions, Engine } from './options.js';
import { createReadSet } from './read-set.js';
import { describeMachine } from './report.js';
import { issueToken, productionEnv, startService } from './service-process.js';

/** Keep-alive connections of the authenticated reads: enough that a slow answer does not hold the rate. */
const AUTHENTICATED_CONNECTIONS = 8;
/** The flood's connections: a client's worker pool. */
const FLOOD_CONNECTIONS = 16;

/** The two settings compared: the service's default limit, and none. */
const LIMITS = [
  { name: 'default (20/60)', env: {} },
  { name: 'off', env: { AUTH_FAILURE_LIMIT: 'off' } },
] as const;
type LimitName = (typeof LIMITS)[number]['name'];

interface FloodResult {
  readonly perSecond: number;
  readonly statusCodes: Readonly<Record<string, number>>;
  readonly errors: number;
}

/** One round of one engine and limit. */
interface RoundResult {
  readonly alone: Measurement;
  readonly flooded: Measurement;
  /** CPU over each measured window: the service, the flood's process, the whole machine. */
  readonly aloneCpu: CpuShare;
  readonly floodedCpu: CpuShare;
  readonly flood: FloodResult;
  /** Token lookups that reached the database during the flood (the service's own metric). */
  readonly lookups: number;
}

const progress = (text: string) => process.stderr.write(`${text}\n`);

export async function runBogusFlood(options: BenchOptions, cleanups: Cleanups): Promise<number> {
  const logDir = join(dirname(options.outputFile), 'logs');
  await mkdir(logDir, { recursive: true });
  const { durationSeconds: duration, warmupSeconds: warmup, rounds } = options;
  progress(
    `Bogus-token flood: ${rounds} round(s) per engine and limit; authenticated reads at ${options.authenticatedRate}/s ` +
      `alone, then under ${options.floodRate}/s made-up tokens; ${duration} s measured after ${warmup} s.`,
  );
  const results = new Map<string, RoundResult[]>();
  for (let round = 1; round <= rounds; round++) {
    for (const engine of options.engines) {
      // Alternate the order from round to round: noise drifts with time.
      const limits = round % 2 === 1 ? LIMITS : [...LIMITS].reverse();
      for (const limit of limits) {
        progress(`round ${round}, ${engine}, AUTH_FAILURE_LIMIT ${limit.name}`);
        const result = await floodRound(
          options,
          cleanups,
          engine,
          limit.env,
          join(logDir, `bogus-flood-${engine}-${round}.log`),
        );
        const key = `${engine} ${limit.name}`;
        results.set(key, [...(results.get(key) ?? []), result]);
        progress(
          `  alone p99 ${formatMs(result.alone.p99Ms)} ms, flooded p99 ${formatMs(result.flooded.p99Ms)} ms, ` +
            `flood ${formatRate(result.flood.perSecond)}/s ${JSON.stringify(result.flood.statusCodes)}, ${result.lookups} lookups`,
        );
      }
    }
  }

  const rows: string[][] = [];
  const json: unknown[] = [];
  for (const engine of options.engines) {
    for (const limit of LIMITS) {
      const runs = results.get(`${engine} ${limit.name}`) ?? [];
      rows.push(...tableRows(engine, limit.name, runs));
      json.push({ engine, authFailureLimit: limit.name, rounds: runs });
    }
  }
  process.stdout.write(
    `\nAuthenticated GET /plants/{id} at ${options.authenticatedRate}/s (${AUTHENTICATED_CONNECTIONS} connections), ` +
      `alone and under ${options.floodRate}/s distinct made-up tokens from 127.0.0.1 (${FLOOD_CONNECTIONS} connections); ` +
      `${rounds} round(s), each value the median of the rounds, [min-max]:\n\n` +
      `${formatColumns(COLUMNS, rows, (index) => index > 0 && index % 2 === 0)}\n`,
  );
  const report = {
    machine: describeMachine(gitCommit(options.apiRoot)),
    settings: {
      authenticatedRate: options.authenticatedRate,
      authenticatedConnections: AUTHENTICATED_CONNECTIONS,
      floodRate: options.floodRate,
      floodConnections: FLOOD_CONNECTIONS,
      durationSeconds: duration,
      warmupSeconds: warmup,
      rounds,
    },
    results: json,
  };
  await mkdir(dirname(options.outputFile), { recursive: true });
  await writeFile(options.outputFile, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`JSON: ${options.outputFile}\n`);
  return 0;
}

const COLUMNS: readonly Column[] = [
  ['engine', 'left'],
  ['AUTH_FAILURE_LIMIT', 'left'],
  ['load', 'left'],
  ['auth req/s', 'right'],
  ['auth p50 ms', 'right'],
  ['auth p99 ms', 'right'],
  ['p99 vs alone', 'right'],
  ['flood req/s', 'right'],
  ['flood answers', 'left'],
  ['token lookups', 'right'],
  ['CPU % svc/flood/all', 'right'],
];

function tableRows(engine: Engine, limit: LimitName, runs: readonly RoundResult[]): string[][] {
  const spread = (values: number[], format: (value: number) => string) =>
    values.length > 1
      ? `${format(median(values))} [${format(Math.min(...values))}-${format(Math.max(...values))}]`
      : format(median(values));
  /** Rate, p50 and p99 of one of the two measurements, over the rounds. */
  const load = (pick: (run: RoundResult) => Measurement) => [
    spread(
      runs.map((run) => pick(run).perSecond),
      formatRate,
    ),
    spread(
      runs.map((run) => pick(run).p50Ms),
      formatMs,
    ),
    spread(
      runs.map((run) => pick(run).p99Ms),
      formatMs,
    ),
  ];
  const statuses = runs.map((run) =>
    Object.entries(run.flood.statusCodes)
      .map(([status, count]) => `${status}: ${count}`)
      .join(', '),
  );
  const cpu = (pick: (run: RoundResult) => CpuShare) =>
    (['server', 'loadGenerator', 'machine'] as const)
      .map((side) => {
        const values = runs.map((run) => pick(run)[side]).filter((value) => value !== null);
        return values.length === 0 ? '-' : String(Math.round(median(values)));
      })
      .join('/');
  return [
    [engine, limit, 'alone', ...load((run) => run.alone), '', '', '', '', cpu((run) => run.aloneCpu)],
    [
      engine,
      limit,
      '+ flood',
      ...load((run) => run.flooded),
      spread(
        runs.map((run) => run.flooded.p99Ms / run.alone.p99Ms),
        (value) => `${value.toFixed(2)}x`,
      ),
      spread(
        runs.map((run) => run.flood.perSecond),
        formatRate,
      ),
      statuses[Math.floor((statuses.length - 1) / 2)] ?? '',
      spread(
        runs.map((run) => run.lookups),
        formatRate,
      ),
      cpu((run) => run.floodedCpu),
    ],
  ];
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
}

/** A fresh service on fresh storage: the reads alone, then under the flood. */
async function floodRound(
  options: BenchOptions,
  cleanups: Cleanups,
  engine: Engine,
  limitEnv: Readonly<Record<string, string>>,
  logFile: string,
): Promise<RoundResult> {
  const storage = await createBenchStorage(options.serverUrl, engine, { cleanups, progress, label: 'bench-flood' });
  try {
    const env = productionEnv(options.childEnv, storage.env, limitEnv);
    const token = await issueToken(options.apiRoot, env, { name: 'bench', scopes: ['plants:read', 'plants:write'] });
    const service = await startService(options.apiRoot, env, logFile);
    const stopService = cleanups.add(`stop the ${engine} service`, () => service.stop());
    try {
      await createReadSet(service.url, token);
      const reads = {
        url: service.url,
        token,
        nextRequest: () => ({ method: 'GET' as const, path: `/plants/${randomReadId()}` }),
        expectedStatus: 200,
      };
      const measure = (seconds: number) =>
        measureHttp(reads, AUTHENTICATED_CONNECTIONS, { seconds }, options.authenticatedRate);
      if (options.warmupSeconds > 0) await measure(options.warmupSeconds);
      const aloneWindow = await startCpuWindow({ serverPid: service.pid, generatorPid: undefined });
      const alone = await measure(options.durationSeconds);
      const aloneCpu = await aloneWindow.stop();
      const lookupsBefore = await tokenLookups(service.url);
      const flooding = runFlood(options, service.url, options.warmupSeconds + options.durationSeconds + 1);
      // The flood first reaches its rate (and, limited, its address its limit), then the reads are measured.
      await new Promise((resolve) => setTimeout(resolve, options.warmupSeconds * 1000));
      const floodedWindow = await startCpuWindow({ serverPid: service.pid, generatorPid: flooding.pid });
      const flooded = await measure(options.durationSeconds);
      const floodedCpu = await floodedWindow.stop();
      const flood = await flooding.result;
      const lookups = (await tokenLookups(service.url)) - lookupsBefore;
      for (const measurement of [alone, flooded]) {
        if (measurement.unexpected > 0 || measurement.errors > 0) {
          throw new Error(
            `authenticated reads: statuses ${JSON.stringify(measurement.statusCodes)}, ${measurement.errors} errors`,
          );
        }
      }
      return { alone, flooded, aloneCpu, floodedCpu, flood, lookups };
    } finally {
      await stopService();
    }
  } finally {
    await storage.dispose();
  }
}

/** The flood, in a process of its own (flood/bogus-token-flood.ts), for `seconds`. */
function runFlood(
  options: BenchOptions,
  url: string,
  seconds: number,
): { readonly pid: number | undefined; readonly result: Promise<FloodResult> } {
  let pid: number | undefined;
  const result = new Promise<FloodResult>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(options.apiRoot, 'bench/flood/bogus-token-flood.ts'),
        url,
        String(options.floodRate),
        String(seconds),
        String(FLOOD_CONNECTIONS),
      ],
      { cwd: options.apiRoot, env: { ...options.childEnv }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    pid = child.pid;
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once('error', reject);
    child.once('close', (code) => {
      try {
        if (code !== 0) throw new Error(`exited with code ${code}: ${stderr}`);
        resolve(JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as FloodResult);
      } catch (error) {
        reject(new Error(`the flood process failed: ${error instanceof Error ? error.message : String(error)}`));
      }
    });
  });
  return { pid, result };
}

/** `db_call_duration_seconds_count` of `authenticateToken`: lookups the token cache did not answer. */
async function tokenLookups(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('db_call_duration_seconds_count{operation="authenticateToken"')) {
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return total;
}
