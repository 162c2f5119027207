/**
 * `pnpm bench`: builds (through turbo), starts the built service as a child process with its
 * production settings (access lines and metrics on), and loads it with autocannon at each
 * concurrency on PostgreSQL and on the embedded database: an invalid body (400), creates, reads by
 * id and pages of the listing, and, at the budget concurrency, a create and a read again with
 * access logging off (what an access line costs). Beside them it measures ceilings on the same
 * machine at the same concurrency: a bare node:http server (HTTP), and the raw driver running
 * single-row INSERTs and the service's own read statements (database); and on PostgreSQL, at the
 * budget concurrency, the reference: the fixed stack alone (Koa, @koa/router, koa-bodyparser, pg)
 * answering the same requests with one statement each and nothing else; and on both engines, at the
 * budget concurrency, the service with made-up tokens (401) and the hand-tuned Fastify reference
 * (Fastify 5, Ajv, fast-json-stringify, the service's own statements; see
 * ceilings/fastify-reference-app.ts) on every compared row. The whole sequence runs
 * `--rounds` times, round after round, and each point reports its median round (see rounds.ts).
 * Prints a table and the budget's PASS/FAIL lines, and writes the same as JSON
 * (bench/results/latest.json).
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createLoad, type LoadSource } from './bench-loads.js';
import { createIdSequence, READ_SET_SIZE } from './bench-plants.js';
import { type BenchStorage, createBenchStorage } from './bench-storage.js';
import { runBogusFlood } from './bogus-flood.js';
import { BUDGET_CONCURRENCY, evaluateBudget } from './budget.js';
import {
  type DatabaseCeiling,
  startDatabaseCeiling,
  startFastifyReference,
  startHttpCeiling,
  startKoaReference,
} from './ceiling-process.js';
import type { CeilingKind } from './ceilings/ceiling-protocol.js';
import { startCpuWindow } from './cpu-usage.js';
import { Cleanups, gitCommit, runBench } from './entry-point.js';
import { formatCpu, formatMicros, formatMs, formatRate } from './figures.js';
import { type HttpLoad, measureHttp } from './http-load.js';
import type { Measurement } from './measurement.js';
import { type BenchOptions, type Engine, loadBenchOptions, USAGE } from './options.js';
import type { SinkCounts } from './otlp-sink/sink-protocol.js';
import { type OtlpSink, startOtlpSink } from './otlp-sink-process.js';
import { readProcessMemory, sampleRss } from './process-memory.js';
import { count200, createReadSet, sampleFeedCursors } from './read-set.js';
import { describeMachine, formatSummary, formatTable, toJsonReport } from './report.js';
import {
  type EngineRun,
  type Failure,
  fastifyTwin,
  type Point,
  type Scenario,
  type ServiceScenario,
  scenarioLabel,
  TRACED,
  type TracedExport,
} from './results-model.js';
import { mergeRounds, summarizeEngines } from './rounds.js';
import { runScaleBench } from './scale.js';
import { issueToken, productionEnv, type ServiceProcess, startService } from './service-process.js';
import { checkServer } from './throwaway-postgres.js';

const cleanups = new Cleanups();
const progress = (text: string) => process.stderr.write(`${text}\n`);

/** Same size as a real token, so the ceiling parses the same request bytes. */
const CEILING_TOKEN = `pst_${'x'.repeat(43)}`;

/** What one round's stages share. */
interface Context extends LoadSource {
  readonly options: BenchOptions;
  readonly logDir: string;
  /** From 1: names the round's stages in failures, and its log files when there are several rounds. */
  readonly round: number;
  /** This round's points. */
  readonly points: Point[];
  readonly failures: Failure[];
  /** Where the service's spans go when tracing is measured; undefined when it is not. */
  readonly sink: OtlpSink | undefined;
  feedCursors: readonly string[];
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

  if (options.bogusFlood) return runBogusFlood(options, cleanups);
  if (options.plants !== undefined) return runScaleBench(options, options.plants, cleanups);

  const logDir = join(dirname(options.outputFile), 'logs');
  await mkdir(logDir, { recursive: true });
  const started = new Date();
  const machine = describeMachine(gitCommit(options.apiRoot));
  // Per concurrency: the HTTP ceiling, and per engine 6 service scenarios and 3 database ceilings;
  // at the budget concurrency per engine 2 more (access logging off), the bad token and the Fastify
  // reference's 7, and the Koa reference's 3 on PostgreSQL; and the traced points.
  const atBudget = options.concurrencies.includes(BUDGET_CONCURRENCY);
  const quietPoints = atBudget ? 10 * options.engines.length + (options.engines.includes('postgres') ? 3 : 0) : 0;
  const pointCount =
    options.concurrencies.length * (1 + 9 * options.engines.length) +
    quietPoints +
    options.tracingConcurrencies.length * 2 * options.engines.length;
  // About 20 s per engine and round to create storage, issue a token and start the processes.
  const roundSeconds = pointCount * (options.durationSeconds + options.warmupSeconds) + 20 * options.engines.length;
  progress(
    `Plant Store bench: ${options.rounds} round${options.rounds > 1 ? 's' : ''} of ${pointCount} points of ` +
      `${options.durationSeconds} s (+${options.warmupSeconds} s warm-up), concurrency ` +
      `${options.concurrencies.join(', ')}, about ${minutes(roundSeconds * options.rounds)} min. Logs: ${logDir}`,
  );

  const failures: Failure[] = [];
  const nextId = createIdSequence();
  let changes = 0;
  const nextChange = () => ++changes;
  const roundPoints: Point[][] = [];
  const roundRuns: EngineRun[][] = [];
  try {
    // One sink for the whole run: it only counts what it receives.
    const sink =
      options.tracingConcurrencies.length === 0
        ? undefined
        : await startOtlpSink({
            apiRoot: options.apiRoot,
            env: options.childEnv,
            logFile: join(logDir, 'otlp-sink.log'),
          });
    if (sink) cleanups.add('stop the OTLP sink', () => sink.stop());
    for (let round = 1; round <= options.rounds; round += 1) {
      if (options.rounds > 1) {
        // After the first round, the rounds so far are a better guess than the estimate.
        const elapsed = (Date.now() - started.getTime()) / 1000;
        const perRound = round === 1 ? roundSeconds : elapsed / (round - 1);
        const left = minutes(perRound * (options.rounds - round + 1));
        progress(`Round ${round} of ${options.rounds} (about ${left} min left)`);
      }
      const context: Context = {
        options,
        logDir,
        round,
        points: [],
        failures,
        nextId,
        nextChange,
        sink,
        feedCursors: [],
      };
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
  process.stdout.write(
    `\n${formatTable(points)}\n\n${formatSummary(machine, options, points, engines, budget, failures)}\n`,
  );
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
    const env = productionEnv(
      options.childEnv,
      storage.env,
      options.servicePoolSize === undefined ? {} : { DATABASE_POOL_SIZE: String(options.servicePoolSize) },
    );
    // Before the service starts: the token command creates the schema, and PGlite allows one process.
    progress(`${engine}: issuing a token`);
    const token = await issueToken(options.apiRoot, env, { name: 'bench', scopes: ['plants:read', 'plants:write'] });

    let created = 0;
    // Requests still in flight when a run stops may be inserted without their 200 being counted.
    let unanswered = 0;
    const countCreates = (point: Point, warmup: Measurement | undefined) => {
      created += count200(point.measurement) + (warmup ? count200(warmup) : 0);
      unanswered += point.concurrency * (warmup ? 2 : 1);
    };
    const peaks: (number | null)[] = [];
    await withService(context, engine, env, 'service', peaks, async (service) => {
      // The 400s first: they write nothing, and measured after the creates they would share the
      // CPUs with PostgreSQL's own work on the rows just written (WAL, checkpoints, autovacuum).
      for (const scenario of ['invalid-body', 'create'] as const) {
        const load = createLoad(context, service.url, token, scenario);
        for (const concurrency of options.concurrencies) {
          const { point, warmup } = await measureHttpPoint(context, load, scenario, engine, concurrency, service.pid);
          if (scenario === 'create') countCreates(point, warmup);
        }
      }
      progress(`${engine}: creating the ${READ_SET_SIZE} plants the reads read`);
      created += await createReadSet(service.url, token);
      for (const scenario of ['get', 'list'] as const) {
        const load = createLoad(context, service.url, token, scenario);
        for (const concurrency of options.concurrencies) {
          await measureHttpPoint(context, load, scenario, engine, concurrency, service.pid);
        }
      }
      // Changes of the read set's plants (each writes its event), then pages of the feed they
      // and the creates before them wrote.
      const update = createLoad(context, service.url, token, 'update');
      for (const concurrency of options.concurrencies) {
        await measureHttpPoint(context, update, 'update', engine, concurrency, service.pid);
      }
      progress(`${engine}: sampling the event feed's cursors`);
      context.feedCursors = await sampleFeedCursors(service.url, token);
      const feed = createLoad(context, service.url, token, 'feed');
      for (const concurrency of options.concurrencies) {
        await measureHttpPoint(context, feed, 'feed', engine, concurrency, service.pid);
      }
    });
    // What an access line costs: the same service with LOG_LEVEL=warn, at the budget concurrency.
    if (options.concurrencies.includes(BUDGET_CONCURRENCY)) {
      const quiet = { ...env, LOG_LEVEL: 'warn' };
      await withService(context, engine, quiet, 'service-no-access-log', peaks, async (service) => {
        for (const scenario of ['create-no-access-log', 'get-no-access-log'] as const) {
          const load = createLoad(context, service.url, token, scenario);
          const { point, warmup } = await measureHttpPoint(
            context,
            load,
            scenario,
            engine,
            BUDGET_CONCURRENCY,
            service.pid,
          );
          if (scenario === 'create-no-access-log') countCreates(point, warmup);
        }
      });
      // The 401 path: made-up tokens with the failed-authentication limit off (at its default, the
      // bench's one address would be answered 429 without a lookup after 20 of them a minute).
      const unlimited = { ...env, AUTH_FAILURE_LIMIT: 'off' };
      await withService(context, engine, unlimited, 'service-auth-limit-off', peaks, async (service) => {
        const load = createLoad(context, service.url, token, 'bad-token');
        await measureHttpPoint(context, load, 'bad-token', engine, BUDGET_CONCURRENCY, service.pid);
      });
    }
    // What tracing costs: the same requests to the service exporting every span to the bench's
    // OTLP sink, a run of its own per path (so that the spans it sent count per path).
    const tracedPeaks: (number | null)[] = [];
    const tracedExports: TracedExport[] = [];
    const { sink } = context;
    if (sink !== undefined) {
      for (const path of ['invalid-body', 'create'] as const) {
        const scenario = TRACED[path];
        const before = await sink.counts();
        let requests = 0;
        const traced = { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url };
        await withService(context, engine, traced, `service-${scenario}`, tracedPeaks, async (service) => {
          const load = createLoad(context, service.url, token, scenario);
          for (const concurrency of options.tracingConcurrencies) {
            const { point, warmup } = await measureHttpPoint(context, load, scenario, engine, concurrency, service.pid);
            requests += point.measurement.completed + (warmup?.completed ?? 0);
            if (path === 'create') countCreates(point, warmup);
          }
        });
        tracedExports.push(await exportsSince(sink, scenario, before, requests));
      }
    }

    // The hand-tuned Fastify reference on the same database, once the service has let go of it
    // (PGlite allows one process); its creates go in `plants` and are counted in the row check.
    if (options.concurrencies.includes(BUDGET_CONCURRENCY)) {
      await benchFastifyReference(context, engine, storage, token, countCreates);
    }

    // The reference, on PostgreSQL at the budget concurrency: the fixed stack alone on the same
    // requests (its inserts in a table of its own, its reads on the service's plants).
    if (engine === 'postgres' && storage.url !== undefined && options.concurrencies.includes(BUDGET_CONCURRENCY)) {
      const reference = await startKoaReference(storage.url, Math.min(BUDGET_CONCURRENCY, options.rawPoolCap), token, {
        apiRoot: options.apiRoot,
        env: options.childEnv,
        logFile: logFile(context, 'koa-reference'),
      });
      const stopReference = cleanups.add('stop the Koa reference', () => reference.stop());
      for (const scenario of [
        'reference-invalid-body',
        'reference-bad-token',
        'reference-create',
        'reference-get',
      ] as const) {
        const load = createLoad(context, reference.url, token, scenario);
        await measureHttpPoint(context, load, scenario, engine, BUDGET_CONCURRENCY, reference.pid);
      }
      await stopReference();
    }

    // The ceilings run after the service, on the same database (the inserts in a table of their
    // own, the reads on the service's plants), and first count the service's rows: every 200 must
    // have been a real insert.
    const ceiling = await startDatabaseCeiling(
      engine === 'postgres'
        ? { engine, url: storage.url ?? '', poolCap: options.rawPoolCap }
        : { engine, dataDir: storage.dataDir },
      {
        apiRoot: options.apiRoot,
        env: options.childEnv,
        logFile: logFile(context, `database-ceiling-${engine}`),
      },
    );
    const stopCeiling = cleanups.add(`stop the ${engine} database ceiling`, () => ceiling.stop());
    const rows = ceiling.ready.servicePlants;
    for (const kind of ['insert', 'select', 'page'] as const) {
      for (const concurrency of options.concurrencies) {
        await measureCeilingPoint(context, ceiling, engine, kind, concurrency);
      }
    }
    await stopCeiling();
    return {
      engine,
      databaseVersion: ceiling.ready.version,
      servicePeakRssBytes: highest(peaks),
      tracedServicePeakRssBytes: highest(tracedPeaks),
      tracedExports,
      rowCheck: { rows, created, unanswered, ok: rows !== null && rows >= created && rows <= created + unanswered },
    };
  } finally {
    await storage.dispose();
  }
}

/** The Fastify reference's scenarios, in the order the service's are measured. */
const FASTIFY_ORDER = ['invalid-body', 'bad-token', 'create', 'get', 'list', 'update', 'feed'] as const;

/** The hand-tuned Fastify reference at the budget concurrency, on the database the service used. */
async function benchFastifyReference(
  context: Context,
  engine: Engine,
  storage: BenchStorage,
  token: string,
  countCreates: (point: Point, warmup: Measurement | undefined) => void,
): Promise<void> {
  const { options } = context;
  progress(`${engine}: starting the Fastify reference`);
  const reference = await startFastifyReference(
    engine === 'postgres'
      ? { engine, url: storage.url ?? '', poolSize: Math.min(BUDGET_CONCURRENCY, options.rawPoolCap) }
      : { engine, dataDir: storage.dataDir },
    token,
    { apiRoot: options.apiRoot, env: options.childEnv, logFile: logFile(context, `fastify-reference-${engine}`) },
  );
  const stop = cleanups.add(`stop the ${engine} Fastify reference`, () => reference.stop());
  try {
    for (const scenario of FASTIFY_ORDER.map(fastifyTwin)) {
      const load = createLoad(context, reference.url, token, scenario);
      const { point, warmup } = await measureHttpPoint(
        context,
        load,
        scenario,
        engine,
        BUDGET_CONCURRENCY,
        reference.pid,
      );
      if (scenario === 'fastify-create') countCreates(point, warmup);
    }
  } finally {
    await stop();
  }
}

/**
 * Starts the service on `env`, runs `work` against it, then records its peak RSS (VmHWM over
 * its whole life) in `peaks` and stops it.
 */
async function withService(
  context: Context,
  engine: Engine,
  env: Readonly<Record<string, string>>,
  name: string,
  peaks: (number | null)[],
  work: (service: ServiceProcess) => Promise<void>,
): Promise<void> {
  progress(`${engine}: starting the ${name === 'service' ? 'service' : `service (${name})`}`);
  const service = await startService(context.options.apiRoot, env, logFile(context, `${name}-${engine}`));
  const stopService = cleanups.add(`stop the ${engine} ${name}`, () => service.stop());
  try {
    await work(service);
  } finally {
    peaks.push(await servicePeak(service));
    await stopService();
  }
}

/** What the sink received from one traced service run (its shutdown flushed the rest). */
async function exportsSince(
  sink: OtlpSink,
  scenario: ServiceScenario,
  before: SinkCounts,
  requests: number,
): Promise<TracedExport> {
  const after = await sink.counts();
  return {
    scenario,
    requests,
    spans: after.spans - before.spans,
    exports: after.requests - before.requests,
    unreadable: after.unreadable - before.unreadable,
  };
}

/** A throwaway PostgreSQL database, or a temp folder for PGlite: both removed afterwards. */
function createStorage(context: Context, engine: Engine): Promise<BenchStorage> {
  return createBenchStorage(context.options.serverUrl, engine, { cleanups, progress, label: 'bench' });
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
  const warmup = warmupSeconds > 0 ? await measureHttp(load, concurrency, { seconds: warmupSeconds }) : undefined;
  const cpuWindow = await startCpuWindow({ serverPid: pid, generatorPid: undefined });
  const measurement = await measureHttp(load, concurrency, { seconds: durationSeconds });
  const cpu = await cpuWindow.stop();
  const point: Point = {
    scenario,
    engine,
    concurrency,
    measurement,
    peakRssBytes: (await sampler.stop()) ?? null,
    cpu,
    cpuMicrosPerRequest: perRequest(cpu.serverSeconds, measurement),
  };
  record(context, point);
  return { point, warmup };
}

const CEILING_SCENARIO: Record<CeilingKind, Scenario> = {
  insert: 'raw-insert',
  select: 'raw-select',
  page: 'raw-page',
};

async function measureCeilingPoint(
  context: Context,
  ceiling: DatabaseCeiling,
  engine: Engine,
  kind: CeilingKind,
  concurrency: number,
): Promise<void> {
  const { warmupSeconds, durationSeconds } = context.options;
  const sampler = sampleRss(ceiling.pid);
  const measured = ceiling.measure(kind, concurrency, warmupSeconds, durationSeconds);
  // The warm-up runs inside the ceiling process: CPU is counted from about when it ends.
  await Promise.race([measured, new Promise((resolve) => setTimeout(resolve, warmupSeconds * 1000))]);
  const cpuWindow = await startCpuWindow({ serverPid: undefined, generatorPid: ceiling.pid });
  const { measurement, connections } = await measured;
  const cpu = await cpuWindow.stop();
  const peakRssBytes = (await sampler.stop()) ?? null;
  const point: Point = {
    scenario: CEILING_SCENARIO[kind],
    engine,
    concurrency,
    measurement,
    peakRssBytes,
    cpu,
    cpuMicrosPerRequest: perRequest(cpu.generatorSeconds, measurement),
    connections,
  };
  record(context, point);
}

/** CPU microseconds per completed request (or statement), null when either is unknown. */
function perRequest(cpuSeconds: number | null, measurement: Measurement): number | null {
  return cpuSeconds === null || measurement.completed === 0 ? null : (cpuSeconds * 1e6) / measurement.completed;
}

function record(context: Context, point: Point): void {
  context.points.push(point);
  const m = point.measurement;
  progress(
    `  ${scenarioLabel(point.scenario, point.engine)} c=${point.concurrency}: ${formatRate(m.perSecond)}/s, ` +
      `p50 ${formatMs(m.p50Ms)} ms, p99 ${formatMs(m.p99Ms)} ms, non-2xx ${m.non2xx}, errors ${m.errors}, ` +
      `CPU% ${formatCpu(point.cpu)}, CPU ${formatMicros(point.cpuMicrosPerRequest)} us/req`,
  );
}

/** The highest of the peaks measured, null when none was. */
function highest(peaks: readonly (number | null)[]): number | null {
  const measured = peaks.filter((peak) => peak !== null);
  return measured.length === 0 ? null : Math.max(...measured);
}

async function servicePeak(service: ServiceProcess): Promise<number | null> {
  return (await readProcessMemory(service.pid))?.peakRssBytes ?? null;
}

runBench('bench', main, cleanups);
