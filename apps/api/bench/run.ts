/**
 * `pnpm bench`: builds (through turbo), starts the built service as a child process, and loads
 * `POST /plants` with autocannon at each concurrency on PostgreSQL and on the embedded database,
 * beside two ceilings measured on the same machine at the same concurrency: a bare node:http
 * server (HTTP) and raw single-row INSERTs through the driver (database). The whole sequence runs
 * `--rounds` times, round after round, and each point reports its median round (see rounds.ts).
 * Prints a table and the budget's PASS/FAIL lines, and writes the same as JSON
 * (bench/results/latest.json).
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { benchPlant, createIdSequence, invalidPlantJson, plantJson } from './bench-plants.js';
import { evaluateBudget } from './budget.js';
import { type InsertCeiling, startHttpCeiling, startInsertCeiling } from './ceiling-process.js';
import { startCpuWindow } from './cpu-usage.js';
import { Cleanups, gitCommit, runBench } from './entry-point.js';
import { formatCpu, formatMs, formatRate } from './figures.js';
import { type HttpLoad, measureHttp } from './http-load.js';
import type { Measurement } from './measurement.js';
import { type BenchOptions, type Engine, loadBenchOptions, USAGE } from './options.js';
import { readProcessMemory, sampleRss } from './process-memory.js';
import { describeMachine, formatSummary, formatTable, toJsonReport } from './report.js';
import { type EngineRun, type Failure, type Point, type Scenario, scenarioLabel } from './results-model.js';
import { mergeRounds, summarizeEngines } from './rounds.js';
import { issueToken, type ServiceProcess, startService } from './service-process.js';
import { checkServer, createBenchDatabase } from './throwaway-postgres.js';

const cleanups = new Cleanups();
const progress = (text: string) => process.stderr.write(`${text}\n`);

/** Same size as a real token, so the ceiling parses the same request bytes. */
const CEILING_TOKEN = `pst_${'x'.repeat(43)}`;

/** What one round's stages share. */
interface Context {
  readonly options: BenchOptions;
  readonly logDir: string;
  /** From 1: names the round's stages in failures, and its log files when there are several rounds. */
  readonly round: number;
  /** This round's points. */
  readonly points: Point[];
  readonly failures: Failure[];
  /** One sequence for every request of the run: an id is never sent twice. */
  readonly nextId: () => bigint;
}

async function main(): Promise<number> {
  // `pnpm bench -- --strict` may hand over the `--` itself.
  const argv = process.argv.slice(2).filter((arg, index) => index > 0 || arg !== '--');
  if (argv.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let options: BenchOptions;
  try {
    options = loadBenchOptions(argv);
  } catch (error) {
    process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}\n`);
    return 2;
  }
  for (const built of ['dist/index.js']) {
    if (!existsSync(join(options.apiRoot, built))) {
      process.stderr.write(`bench: ${built} is missing: build first (the root \`pnpm bench\` does)\n`);
      return 2;
    }
  }
  if (options.engines.includes('postgres')) {
    try {
      await checkServer(options.serverUrl);
    } catch (error) {
      process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
      return 1;
    }
  }

  const logDir = join(dirname(options.outputFile), 'logs');
  await mkdir(logDir, { recursive: true });
  const started = new Date();
  const machine = describeMachine(gitCommit(options.apiRoot));
  const pointCount = options.concurrencies.length * (1 + 3 * options.engines.length);
  // About 20 s per engine and round to create storage, issue a token and start the processes.
  const roundSeconds = pointCount * (options.durationSeconds + options.warmupSeconds) + 20 * options.engines.length;
  progress(
    `Plant Store bench: ${options.rounds} round${options.rounds > 1 ? 's' : ''} of ${pointCount} points of ` +
      `${options.durationSeconds} s (+${options.warmupSeconds} s warm-up), concurrency ` +
      `${options.concurrencies.join(', ')}, about ${minutes(roundSeconds * options.rounds)} min. Logs: ${logDir}`,
  );

  const failures: Failure[] = [];
  const nextId = createIdSequence();
  const roundPoints: Point[][] = [];
  const roundRuns: EngineRun[][] = [];
  try {
    for (let round = 1; round <= options.rounds; round += 1) {
      if (options.rounds > 1) {
        // After the first round, the rounds so far are a better guess than the estimate.
        const elapsed = (Date.now() - started.getTime()) / 1000;
        const perRound = round === 1 ? roundSeconds : elapsed / (round - 1);
        const left = minutes(perRound * (options.rounds - round + 1));
        progress(`Round ${round} of ${options.rounds} (about ${left} min left)`);
      }
      const context: Context = { options, logDir, round, points: [], failures, nextId };
      const runs: EngineRun[] = [];
      await runStage(context, 'HTTP ceiling', () => benchHttpCeiling(context));
      for (const engine of options.engines) {
        const run = await runStage(context, engine, () => benchEngine(context, engine));
        if (run) runs.push(run);
      }
      roundPoints.push(context.points);
      roundRuns.push(runs);
    }
  } finally {
    await cleanups.runAll();
  }

  const points = mergeRounds(roundPoints);
  const engines = summarizeEngines(roundRuns);
  const budget = evaluateBudget(points, engines);
  process.stdout.write(`\n${formatTable(points)}\n\n${formatSummary(machine, options, engines, budget, failures)}\n`);
  const report = toJsonReport(started, machine, options, points, engines, budget, failures);
  await mkdir(dirname(options.outputFile), { recursive: true });
  await writeFile(options.outputFile, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`JSON: ${options.outputFile}\n`);

  if (failures.length > 0) return 1;
  return options.strict && budget.some((line) => line.verdict === 'FAIL') ? 1 : 0;
}

/** A failed stage is reported and the others still run: a partial table beats none. */
async function runStage<T>(context: Context, name: string, work: () => Promise<T>): Promise<T | undefined> {
  const stage = context.options.rounds > 1 ? `round ${context.round}: ${name}` : name;
  try {
    return await work();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    context.failures.push({ stage, message });
    progress(`${stage} failed: ${message}`);
    return undefined;
  }
}

/** A log file per process and round: a later round must not overwrite the log of a failure. */
function logFile(context: Context, name: string): string {
  return join(context.logDir, context.options.rounds > 1 ? `${name}-round${context.round}.log` : `${name}.log`);
}

function minutes(seconds: number): number {
  return Math.max(1, Math.ceil(seconds / 60));
}

async function benchHttpCeiling(context: Context): Promise<void> {
  const { options } = context;
  const ceiling = await startHttpCeiling({
    apiRoot: options.apiRoot,
    env: options.childEnv,
    logFile: logFile(context, 'http-ceiling'),
  });
  const stop = cleanups.add('stop the HTTP ceiling', () => ceiling.stop());
  const load = createLoad(context, ceiling.url, CEILING_TOKEN, 'create');
  for (const concurrency of options.concurrencies) {
    await measureHttpPoint(context, load, 'http-ceiling', null, concurrency, ceiling.pid);
  }
  await stop();
}

async function benchEngine(context: Context, engine: Engine): Promise<EngineRun> {
  const { options } = context;
  const storage = await createStorage(context, engine);
  try {
    const env: Record<string, string> = {
      ...options.childEnv,
      ...storage.env,
      NODE_ENV: 'production',
      // The bench runs production settings on the embedded database too.
      ALLOW_EMBEDDED_DATABASE: 'true',
      LOG_LEVEL: 'warn',
      SHUTDOWN_TIMEOUT_MS: '5000',
      ...(options.servicePoolSize === undefined ? {} : { DATABASE_POOL_SIZE: String(options.servicePoolSize) }),
    };
    // Before the service starts: the token command creates the schema, and PGlite allows one process.
    progress(`${engine}: issuing a token`);
    const token = await issueToken(options.apiRoot, env, { name: 'bench', scopes: ['plants:write'] });
    progress(`${engine}: starting the service`);
    const service = await startService(options.apiRoot, env, logFile(context, `service-${engine}`));
    const stopService = cleanups.add(`stop the ${engine} service`, () => service.stop());

    let created = 0;
    // Requests still in flight when a run stops may be inserted without their 200 being counted.
    let unanswered = 0;
    let servicePeakRssBytes: number | null = null;
    try {
      // The 400s first: they write nothing, and measured after the creates they would share the
      // CPUs with PostgreSQL's own work on the rows just written (WAL, checkpoints, autovacuum).
      for (const scenario of ['invalid-body', 'create'] as const) {
        const load = createLoad(context, service.url, token, scenario);
        for (const concurrency of options.concurrencies) {
          const { point, warmup } = await measureHttpPoint(context, load, scenario, engine, concurrency, service.pid);
          if (scenario === 'create') {
            created += count200(point.measurement) + (warmup ? count200(warmup) : 0);
            unanswered += concurrency * (warmup ? 2 : 1);
          }
        }
      }
    } finally {
      servicePeakRssBytes = await servicePeak(service);
      await stopService();
    }

    // The ceiling runs after the service, on the same database (its own table), and first
    // counts the service's rows: every 200 must have been a real insert.
    const ceiling = await startInsertCeiling(
      engine === 'postgres'
        ? { engine, url: storage.url ?? '', poolCap: options.rawPoolCap }
        : { engine, dataDir: storage.dataDir },
      {
        apiRoot: options.apiRoot,
        env: options.childEnv,
        logFile: logFile(context, `insert-ceiling-${engine}`),
      },
    );
    const stopCeiling = cleanups.add(`stop the ${engine} insert ceiling`, () => ceiling.stop());
    const rows = ceiling.ready.servicePlants;
    for (const concurrency of options.concurrencies) {
      await measureInsertPoint(context, ceiling, engine, concurrency);
    }
    await stopCeiling();
    return {
      engine,
      databaseVersion: ceiling.ready.version,
      servicePeakRssBytes,
      rowCheck: { rows, created, unanswered, ok: rows !== null && rows >= created && rows <= created + unanswered },
    };
  } finally {
    await storage.dispose();
  }
}

interface Storage {
  readonly env: Record<string, string>;
  readonly url: string | undefined;
  readonly dataDir: string;
  readonly dispose: () => Promise<void>;
}

/** A throwaway PostgreSQL database, or a temp folder for PGlite: both removed afterwards. */
async function createStorage(context: Context, engine: Engine): Promise<Storage> {
  const dataDir = await mkdtemp(join(tmpdir(), `plant-store-bench-${engine}-`));
  const removeDir = cleanups.add(`delete ${dataDir}`, () => rm(dataDir, { recursive: true, force: true }));
  if (engine === 'pglite') return { env: { DATA_DIR: dataDir }, url: undefined, dataDir, dispose: removeDir };
  const database = await createBenchDatabase(context.options.serverUrl);
  progress(`postgres: created database ${database.name}`);
  const drop = cleanups.add(`drop database ${database.name}`, () => database.drop());
  return {
    env: { DATABASE_URL: database.url, DATA_DIR: dataDir },
    url: database.url,
    dataDir,
    dispose: async () => {
      await drop();
      await removeDir();
    },
  };
}

function createLoad(context: Context, url: string, token: string, scenario: 'create' | 'invalid-body'): HttpLoad {
  const body = scenario === 'create' ? plantJson : invalidPlantJson;
  return {
    url,
    token,
    nextBody: () => body(benchPlant(context.nextId())),
    expectedStatus: scenario === 'create' ? 200 : 400,
  };
}

async function measureHttpPoint(
  context: Context,
  load: HttpLoad,
  scenario: Scenario,
  engine: Engine | null,
  concurrency: number,
  pid: number,
): Promise<{ point: Point; warmup: Measurement | undefined }> {
  const { warmupSeconds, durationSeconds } = context.options;
  const sampler = sampleRss(pid);
  const warmup = warmupSeconds > 0 ? await measureHttp(load, concurrency, warmupSeconds) : undefined;
  const cpu = await startCpuWindow({ serverPid: pid, generatorPid: undefined });
  const measurement = await measureHttp(load, concurrency, durationSeconds);
  const point: Point = {
    scenario,
    engine,
    concurrency,
    measurement,
    peakRssBytes: (await sampler.stop()) ?? null,
    cpu: await cpu.stop(),
  };
  record(context, point);
  return { point, warmup };
}

async function measureInsertPoint(
  context: Context,
  ceiling: InsertCeiling,
  engine: Engine,
  concurrency: number,
): Promise<void> {
  const { warmupSeconds, durationSeconds } = context.options;
  const sampler = sampleRss(ceiling.pid);
  const measured = ceiling.measure(concurrency, warmupSeconds, durationSeconds);
  // The warm-up runs inside the ceiling process: CPU is counted from about when it ends.
  await Promise.race([measured, new Promise((resolve) => setTimeout(resolve, warmupSeconds * 1000))]);
  const cpu = await startCpuWindow({ serverPid: undefined, generatorPid: ceiling.pid });
  const { measurement, connections } = await measured;
  const peakRssBytes = (await sampler.stop()) ?? null;
  const point: Point = {
    scenario: 'raw-insert',
    engine,
    concurrency,
    measurement,
    peakRssBytes,
    cpu: await cpu.stop(),
    connections,
  };
  record(context, point);
}

function record(context: Context, point: Point): void {
  context.points.push(point);
  const m = point.measurement;
  progress(
    `  ${scenarioLabel(point.scenario, point.engine)} c=${point.concurrency}: ${formatRate(m.perSecond)}/s, ` +
      `p50 ${formatMs(m.p50Ms)} ms, p99 ${formatMs(m.p99Ms)} ms, non-2xx ${m.non2xx}, errors ${m.errors}, ` +
      `CPU% ${formatCpu(point.cpu)}`,
  );
}

function count200(measurement: Measurement): number {
  return measurement.statusCodes['200'] ?? 0;
}

async function servicePeak(service: ServiceProcess): Promise<number | null> {
  return (await readProcessMemory(service.pid))?.peakRssBytes ?? null;
}

runBench('bench', main, cleanups);
