import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export type Engine = 'postgres' | 'pglite';
export const ENGINES: readonly Engine[] = ['postgres', 'pglite'];

export interface BenchOptions {
  /** Seconds measured per point (scenario x concurrency). */
  readonly durationSeconds: number;
  /** Seconds of load before each point, not measured. */
  readonly warmupSeconds: number;
  readonly concurrencies: readonly number[];
  /**
   * Times the whole sequence runs, round after round; each point reports its median round. One
   * run of a point varies by 20-40% on a small shared machine: one round alone decides little.
   */
  readonly rounds: number;
  readonly engines: readonly Engine[];
  /** The PostgreSQL server on which a throwaway database is created (and dropped). */
  readonly serverUrl: string;
  /** The raw INSERT ceiling's pool: one connection per in-flight insert, up to this many. */
  readonly rawPoolCap: number;
  /**
   * Concurrencies at which the service is measured a second time with tracing on (exporting every
   * span to a local OTLP sink), beside the usual points; empty: tracing is not measured.
   */
  readonly tracingConcurrencies: readonly number[];
  /** DATABASE_POOL_SIZE for the service; undefined keeps the service's own default. */
  readonly servicePoolSize: number | undefined;
  /** Exit 1 when a budget target fails. */
  readonly strict: boolean;
  readonly outputFile: string;
  /** apps/api: where dist/ and bench/ live. */
  readonly apiRoot: string;
  /** The only variables the bench passes on to the processes it starts. */
  readonly childEnv: Readonly<Record<string, string>>;
  /** Run the bogus-token flood scenario (bogus-flood.ts) instead of the sweep. */
  readonly bogusFlood: boolean;
  /** That scenario's flood: made-up tokens per second, from one address. */
  readonly floodRate: number;
  /** That scenario's authenticated reads per second, measured alone and under the flood. */
  readonly authenticatedRate: number;
  /**
   * Instead of the sweep: every row at 10,000 plants and at this many, loaded through the import
   * (scale.ts); undefined: the sweep.
   */
  readonly plants: number | undefined;
}

export const USAGE = `Usage: pnpm bench [-- options]   (or: pnpm --filter @plant-store/api bench [options])

  --duration SECONDS     measured seconds per point          (BENCH_DURATION_SECONDS, default 5)
  --warmup SECONDS       unmeasured load before each point   (BENCH_WARMUP_SECONDS, default 2)
  --concurrency LIST     comma-separated, e.g. 1,16,64,256   (BENCH_CONCURRENCY, default 1,16,64,256)
  --rounds N             whole sequence N times, 1 to 20     (BENCH_ROUNDS, default 3)
                         (each point reports its median-req/s round)
  --engines LIST         postgres,pglite                     (BENCH_ENGINES, default both)
  --database-url URL     PostgreSQL server for a throwaway database
                         (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test)
  --raw-pool-cap N       raw INSERT pool min(concurrency,N)  (BENCH_RAW_POOL_CAP, default 64)
  --tracing LIST         also measure the service with tracing on (spans to a local OTLP sink)
                         at these concurrencies, or off      (BENCH_TRACING, default 64)
  --service-pool-size N  the service's DATABASE_POOL_SIZE    (BENCH_SERVICE_POOL_SIZE, default: the service's)
  --bogus-flood          instead of the sweep: authenticated reads at a fixed rate alone, then under a
                         flood of distinct made-up tokens from one address, with the failed-
                         authentication limit on and off (see docs/performance.md)
  --flood-rate N         that flood, requests/s               (BENCH_FLOOD_RATE, default 2000)
  --auth-rate N          those reads, requests/s              (BENCH_AUTH_RATE, default 200)
  --plants N             instead of the sweep: every row at c=64 at 10,000 plants and at N (100,000 to
                         100,000,000), both loaded through the import, side by side (BENCH_PLANTS;
                         see docs/performance.md, "Costs at ten million plants"); --rounds,
                         --duration, --warmup and --engines apply
  --output FILE          JSON results                         (default bench/results/latest.json,
                         bench/results/bogus-flood.json with --bogus-flood)
  --strict               exit 1 when a budget target fails
  --help                 this text`;

export class OptionsError extends Error {
  override readonly name = 'OptionsError';
}

const API_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Flags win over BENCH_* variables, which win over the defaults. */
export function loadBenchOptions(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): BenchOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      duration: { type: 'string' },
      warmup: { type: 'string' },
      concurrency: { type: 'string' },
      rounds: { type: 'string' },
      engines: { type: 'string' },
      'database-url': { type: 'string' },
      'raw-pool-cap': { type: 'string' },
      tracing: { type: 'string' },
      'service-pool-size': { type: 'string' },
      output: { type: 'string' },
      strict: { type: 'boolean', default: false },
      'bogus-flood': { type: 'boolean', default: false },
      'flood-rate': { type: 'string' },
      'auth-rate': { type: 'string' },
      plants: { type: 'string' },
    },
    strict: true,
  });
  const pick = (flag: string | undefined, variable: string): string | undefined =>
    flag ?? (env[variable] === '' ? undefined : env[variable]);

  const servicePoolSize = pick(values['service-pool-size'], 'BENCH_SERVICE_POOL_SIZE');
  const tracing = pick(values.tracing, 'BENCH_TRACING') ?? '64';
  const plants = pick(values.plants, 'BENCH_PLANTS');
  return {
    durationSeconds: parseNumber(pick(values.duration, 'BENCH_DURATION_SECONDS') ?? '5', 'duration', 0.5, 3600),
    warmupSeconds: parseNumber(pick(values.warmup, 'BENCH_WARMUP_SECONDS') ?? '2', 'warmup', 0, 600),
    concurrencies: parseList(pick(values.concurrency, 'BENCH_CONCURRENCY') ?? '1,16,64,256', 'concurrency').map(
      (item) => parseInteger(item, 'concurrency', 1, 10_000),
    ),
    rounds: parseInteger(pick(values.rounds, 'BENCH_ROUNDS') ?? '3', 'rounds', 1, 20),
    engines: parseList(pick(values.engines, 'BENCH_ENGINES') ?? ENGINES.join(','), 'engines').map(parseEngine),
    serverUrl: parseUrl(
      pick(values['database-url'], 'BENCH_DATABASE_URL') ?? 'postgres://postgres@127.0.0.1:5432/test',
    ),
    tracingConcurrencies:
      tracing === 'off' ? [] : parseList(tracing, 'tracing').map((item) => parseInteger(item, 'tracing', 1, 10_000)),
    rawPoolCap: parseInteger(pick(values['raw-pool-cap'], 'BENCH_RAW_POOL_CAP') ?? '64', 'raw-pool-cap', 1, 1000),
    servicePoolSize:
      servicePoolSize === undefined ? undefined : parseInteger(servicePoolSize, 'service-pool-size', 1, 1000),
    strict: values.strict,
    outputFile:
      values.output ??
      fileURLToPath(
        new URL(values['bogus-flood'] ? 'results/bogus-flood.json' : 'results/latest.json', import.meta.url),
      ),
    apiRoot: API_ROOT,
    childEnv: env.PATH === undefined ? {} : { PATH: env.PATH },
    bogusFlood: values['bogus-flood'],
    floodRate: parseInteger(pick(values['flood-rate'], 'BENCH_FLOOD_RATE') ?? '2000', 'flood-rate', 1, 100_000),
    authenticatedRate: parseInteger(pick(values['auth-rate'], 'BENCH_AUTH_RATE') ?? '200', 'auth-rate', 1, 100_000),
    plants: plants === undefined ? undefined : parseInteger(plants, 'plants', 100_000, 100_000_000),
  };
}

function parseNumber(text: string, name: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || value < min || value > max) {
    throw new OptionsError(`--${name} must be a number of seconds from ${min} to ${max}, not "${text}"`);
  }
  return value;
}

function parseInteger(text: string, name: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    throw new OptionsError(`--${name} takes integers from ${min} to ${max}, not "${text}"`);
  }
  return value;
}

function parseList(text: string, name: string): string[] {
  const items = text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (items.length === 0) throw new OptionsError(`--${name} must list at least one value`);
  return [...new Set(items)];
}

function parseEngine(text: string): Engine {
  const engine = ENGINES.find((candidate) => candidate === text);
  if (engine === undefined) throw new OptionsError(`--engines takes ${ENGINES.join(', ')}, not "${text}"`);
  return engine;
}

function parseUrl(text: string): string {
  if (!/^postgres(ql)?:\/\//.test(text)) throw new OptionsError('--database-url must be a postgres:// URL');
  return text;
}
