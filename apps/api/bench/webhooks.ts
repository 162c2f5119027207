/**
 * `pnpm bench:webhooks`: builds (through turbo), then on PostgreSQL (a throwaway database) and on
 * the embedded database (a temp folder) starts the built service and measures its webhook
 * dispatcher against receivers on loopback:
 * 1. latency: one subscription, creates at a steady modest rate, each waited for; per event, the
 *    time from the create's 200 to the receiver getting the POST;
 * 2. backlog: a burst of creates from many callers, to 1 and then 4 receivers; creates/s, the
 *    dispatcher's deliveries/s, how long the backlog took to drain, and that every plant id
 *    arrived (and how many twice);
 * 3. fan-out: the same burst with no subscription and with 100, creates/s side by side (the
 *    deliveries are the dispatcher's to write, not the create's); then as many updates of plants
 *    created before, with none and with 100 subscriptions taking every type (plant.updated goes
 *    out the same way); on PostgreSQL once more on a service process that does not dispatch
 *    (WEBHOOKS_DISPATCH=false), the create and update paths alone.
 * Prints three tables and writes the same as JSON (bench/results/webhooks-latest.json).
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createIdSequence } from './bench-plants.js';
import { type BenchStorage, createBenchStorage } from './bench-storage.js';
import { Cleanups, gitCommit, runBench } from './entry-point.js';
import { type BenchOptions, type Engine, loadBenchOptions } from './options.js';
import { describeMachine } from './report.js';
import type { Failure } from './results-model.js';
import { issueToken, startService } from './service-process.js';
import { checkServer } from './throwaway-postgres.js';
import type { ServiceApi } from './webhooks-client.js';
import {
  type BacklogResult,
  type BacklogSettings,
  type FanOutChange,
  type FanOutDispatcher,
  type FanOutResult,
  type LatencyResult,
  type LatencySettings,
  measureBacklog,
  measureFanOut,
  measureLatency,
} from './webhooks-measure.js';
import { formatBacklogTable, formatFanOutTable, formatLatencyTable, toWebhooksJson } from './webhooks-report.js';

const USAGE = `Usage: pnpm bench:webhooks [-- options]   (or: pnpm --filter @plant-store/api bench:webhooks [options])

  --engines LIST         postgres,pglite                      (BENCH_ENGINES, default both)
  --database-url URL     PostgreSQL server for a throwaway database
                         (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test)
  --rate N               latency: creates per second           (default 50)
  --seconds SECONDS      latency: seconds of creates           (default 10)
  --creates N            backlog: creates in the burst         (default 3000)
  --concurrency N        backlog: creates in flight at once    (default 32)
  --receivers LIST       backlog: receiver counts, one run each (default 1,4)
  --fan-out LIST         fan-out: subscription counts, one burst each (default 0,100; "" skips)
  --output FILE          JSON results                          (default bench/results/webhooks-latest.json)
  --help                 this text`;

/** What the service is started with beside its storage: receivers on 127.0.0.1 must be allowed. */
const SERVICE_WEBHOOK_ENV: Readonly<Record<string, string>> = { WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true' };

interface WebhooksBenchOptions {
  /** Engines, server URL, apiRoot and childEnv, read and checked as `pnpm bench` reads them. */
  readonly base: BenchOptions;
  readonly latency: LatencySettings;
  readonly backlog: BacklogSettings;
  readonly receiverCounts: readonly number[];
  readonly fanOutCounts: readonly number[];
  readonly outputFile: string;
}

const cleanups = new Cleanups();

const progress = (text: string) => process.stderr.write(`${text}\n`);

async function main(): Promise<number> {
  // `pnpm bench:webhooks -- --engines pglite` may hand over the `--` itself.
  const argv = process.argv.slice(2).filter((arg, index) => index > 0 || arg !== '--');
  if (argv.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let options: WebhooksBenchOptions;
  try {
    options = loadOptions(argv);
  } catch (error) {
    process.stderr.write(`bench:webhooks: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}\n`);
    return 2;
  }
  const { apiRoot, engines, serverUrl } = options.base;
  for (const built of ['dist/index.js']) {
    if (!existsSync(join(apiRoot, built))) {
      process.stderr.write(
        `bench:webhooks: ${built} is missing: build first (the root \`pnpm bench:webhooks\` does)\n`,
      );
      return 2;
    }
  }
  if (engines.includes('postgres')) {
    try {
      await checkServer(serverUrl);
    } catch (error) {
      process.stderr.write(`bench:webhooks: ${error instanceof Error ? error.message : String(error)}\n`);
      return 1;
    }
  }

  const logDir = join(dirname(options.outputFile), 'logs');
  await mkdir(logDir, { recursive: true });
  const started = new Date();
  const machine = describeMachine(gitCommit(apiRoot));
  progress(
    `Plant Store webhooks bench on ${engines.join(', ')}, about ${estimateMinutes(options)} min. Logs: ${logDir}`,
  );

  const latency: LatencyResult[] = [];
  const backlog: BacklogResult[] = [];
  const fanOut: FanOutResult[] = [];
  const failures: Failure[] = [];
  // One sequence for the whole run: no id is created twice, whichever engine.
  const nextId = createIdSequence();
  async function measureFanOuts(
    api: ServiceApi,
    engine: Engine,
    dispatcher: FanOutDispatcher,
    changes: readonly FanOutChange[] = ['creates'],
  ): Promise<void> {
    for (const change of changes) {
      for (const subscriptions of options.fanOutCounts) {
        const result = await runStage(
          failures,
          `${engine}: ${change} with ${subscriptions} subscriptions, dispatcher ${dispatcher}`,
          () => measureFanOut(api, engine, dispatcher, nextId, subscriptions, options.backlog, change),
        );
        if (result === undefined) continue;
        fanOut.push(result);
        progress(
          `  ${engine}, ${change}, ${subscriptions} subscriptions, dispatcher ${dispatcher}: ` +
            `${Math.round(result.createsPerSecond)} ${change}/s, failed ${result.failedCreates}`,
        );
      }
    }
  }
  try {
    for (const engine of engines) {
      // PostgreSQL only: there a deployment may run serving replicas with WEBHOOKS_DISPATCH=false
      // beside dispatching ones (PGlite is one process). The create path alone, with as many
      // subscriptions: a new process, warmed up by a burst not measured.
      const withoutDispatch =
        engine === 'postgres' && options.fanOutCounts.length > 0
          ? async (api: ServiceApi) => {
              await runStage(failures, `${engine}: warm-up of the process that does not dispatch`, () =>
                measureFanOut(api, engine, 'elsewhere', nextId, 0, options.backlog),
              );
              await measureFanOuts(api, engine, 'elsewhere', ['creates', 'updates']);
            }
          : undefined;
      await runStage(failures, engine, () =>
        benchEngine(
          options,
          engine,
          logDir,
          async (api) => {
            const measured = await runStage(failures, `${engine}: latency`, () =>
              measureLatency(api, engine, nextId, options.latency),
            );
            if (measured) {
              latency.push(measured);
              progress(`  ${engine} latency: p50 ${measured.p50Ms.toFixed(1)} ms, p99 ${measured.p99Ms.toFixed(1)} ms`);
            }
            for (const receivers of options.receiverCounts) {
              const result = await runStage(failures, `${engine}: backlog to ${receivers} receivers`, () =>
                measureBacklog(api, engine, nextId, receivers, options.backlog),
              );
              if (result === undefined) continue;
              backlog.push(result);
              progress(
                `  ${engine} backlog, ${receivers} receivers: ${Math.round(result.createsPerSecond)} creates/s, ` +
                  `${Math.round(result.deliveriesPerSecond)} deliveries/s, missing ${result.missing}`,
              );
            }
            await measureFanOuts(api, engine, 'this process', ['creates', 'updates']);
          },
          withoutDispatch,
        ),
      );
    }
  } finally {
    await cleanups.runAll();
  }

  for (const result of [...latency, ...backlog]) {
    const stage = `${result.engine}: ${'receivers' in result ? `backlog to ${result.receivers} receivers` : 'latency'}`;
    if (result.missing > 0) failures.push({ stage, message: `${result.missing} deliveries never arrived` });
    if ('unreadable' in result && result.unreadable > 0) {
      failures.push({ stage, message: `${result.unreadable} deliveries had no plant id in their body` });
    }
  }
  for (const result of fanOut) {
    if (result.failedCreates > 0) {
      failures.push({
        stage: `${result.engine}: ${result.change} with ${result.subscriptions} subscriptions, dispatcher ${result.dispatcher}`,
        message: `${result.failedCreates} ${result.change} did not answer 200`,
      });
    }
  }
  const failureLines = failures.map((failure) => `ERROR  ${failure.stage}: ${failure.message}`);
  process.stdout.write(
    `\n${formatLatencyTable(latency, options.latency)}\n\n${formatBacklogTable(backlog, options.backlog)}\n` +
      `\n${formatFanOutTable(fanOut, options.backlog)}\n` +
      `${failureLines.length > 0 ? `\n${failureLines.join('\n')}\n` : ''}\n` +
      `${machine.cpus} CPUs (${machine.cpuModel}), Node ${machine.node}, 1-min load average at start ` +
      `${machine.loadAverageAtStart}; the bench (callers and receivers), the service and PostgreSQL share these CPUs.\n`,
  );
  const report = toWebhooksJson(
    started,
    machine,
    { latency: options.latency, backlog: options.backlog },
    SERVICE_WEBHOOK_ENV,
    latency,
    backlog,
    fanOut,
    failures,
  );
  await mkdir(dirname(options.outputFile), { recursive: true });
  await writeFile(options.outputFile, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`JSON: ${options.outputFile}\n`);
  return failures.length > 0 ? 1 : 0;
}

/** A failed stage is reported and the others still run: a partial table beats none. */
async function runStage<T>(failures: Failure[], stage: string, work: () => Promise<T>): Promise<T | undefined> {
  try {
    return await work();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    failures.push({ stage, message });
    progress(`${stage} failed: ${message}`);
    return undefined;
  }
}

/**
 * Storage, a token and the service for one engine; `work` measures; then, when given,
 * `withoutDispatch` measures a new service process on the same storage started with
 * WEBHOOKS_DISPATCH=false; all of it undone afterwards.
 */
async function benchEngine(
  options: WebhooksBenchOptions,
  engine: Engine,
  logDir: string,
  work: (api: ServiceApi) => Promise<void>,
  withoutDispatch?: (api: ServiceApi) => Promise<void>,
): Promise<void> {
  const storage = await createStorage(options.base, engine);
  try {
    const env: Record<string, string> = {
      ...options.base.childEnv,
      ...storage.env,
      NODE_ENV: 'production',
      // Metrics measured and served on the API port, as the bench has always run them.
      METRICS_ON_API_PORT: 'true',
      // The bench runs production settings on the embedded database too.
      ALLOW_EMBEDDED_DATABASE: 'true',
      LOG_LEVEL: 'warn',
      SHUTDOWN_TIMEOUT_MS: '5000',
      ...SERVICE_WEBHOOK_ENV,
    };
    // Before the service starts: the token command creates the schema, and PGlite allows one process.
    progress(`${engine}: issuing a token`);
    const token = await issueToken(options.base.apiRoot, env, {
      name: 'bench-webhooks',
      // plants:read: registering a subscription needs it (its events carry plants).
      scopes: ['plants:read', 'plants:write', 'webhooks:manage'],
    });
    progress(`${engine}: starting the service`);
    const service = await startService(options.base.apiRoot, env, join(logDir, `webhooks-service-${engine}.log`));
    const stopService = cleanups.add(`stop the ${engine} service`, () => service.stop());
    try {
      await work({ url: service.url, token, pid: service.pid });
    } finally {
      await stopService();
    }
    if (withoutDispatch !== undefined) {
      progress(`${engine}: starting a service that does not dispatch (WEBHOOKS_DISPATCH=false)`);
      const serving = await startService(
        options.base.apiRoot,
        { ...env, WEBHOOKS_DISPATCH: 'false' },
        join(logDir, `webhooks-service-${engine}-no-dispatch.log`),
      );
      const stopServing = cleanups.add(`stop the ${engine} service that does not dispatch`, () => serving.stop());
      try {
        await withoutDispatch({ url: serving.url, token, pid: serving.pid });
      } finally {
        await stopServing();
      }
    }
  } finally {
    await storage.dispose();
  }
}

/** A throwaway PostgreSQL database, or a temp folder for PGlite: both removed afterwards. */
function createStorage(options: BenchOptions, engine: Engine): Promise<BenchStorage> {
  return createBenchStorage(options.serverUrl, engine, { cleanups, progress, label: 'bench-webhooks' });
}

/**
 * This bench's own flags; --engines and --database-url (and their BENCH_* variables) are handed
 * to `pnpm bench`'s loader, which checks them and knows the defaults.
 */
function loadOptions(argv: readonly string[]): WebhooksBenchOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      engines: { type: 'string' },
      'database-url': { type: 'string' },
      rate: { type: 'string' },
      seconds: { type: 'string' },
      creates: { type: 'string' },
      concurrency: { type: 'string' },
      receivers: { type: 'string' },
      'fan-out': { type: 'string' },
      output: { type: 'string' },
    },
    strict: true,
  });
  const forwarded = [
    ...(values.engines === undefined ? [] : ['--engines', values.engines]),
    ...(values['database-url'] === undefined ? [] : ['--database-url', values['database-url']]),
  ];
  return {
    base: loadBenchOptions(forwarded),
    latency: {
      ratePerSecond: parseInteger(values.rate ?? '50', 'rate', 1, 1000),
      seconds: parseInteger(values.seconds ?? '10', 'seconds', 1, 600),
      warmupCreates: 25,
      deliveryTimeoutMs: 30_000,
    },
    backlog: {
      creates: parseInteger(values.creates ?? '3000', 'creates', 1, 1_000_000),
      concurrency: parseInteger(values.concurrency ?? '32', 'concurrency', 1, 1000),
      deliveryTimeoutMs: 120_000,
    },
    receiverCounts: (values.receivers ?? '1,4').split(',').map((item) => parseInteger(item.trim(), 'receivers', 1, 16)),
    fanOutCounts: (values['fan-out'] ?? '0,100')
      .split(',')
      .filter((item) => item.trim() !== '')
      .map((item) => parseInteger(item.trim(), 'fan-out', 0, 100)),
    outputFile: values.output ?? fileURLToPath(new URL('results/webhooks-latest.json', import.meta.url)),
  };
}

function parseInteger(text: string, name: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) {
    throw new Error(`--${name} takes integers from ${min} to ${max}, not "${text}"`);
  }
  return value;
}

/**
 * About 15 s per engine to start, plus the latency run, plus a guess of 300 deliveries/s for
 * the backlogs (on 2 busy CPUs): only to say roughly how long to wait. The default burst is
 * sized for about 3 minutes in all; the 4-receiver backlog (4 deliveries per create) dominates.
 */
function estimateMinutes(options: WebhooksBenchOptions): number {
  const deliveries = options.receiverCounts.reduce((total, count) => total + count * options.backlog.creates, 0);
  const perEngine = 15 + options.latency.seconds + deliveries / 300 + options.fanOutCounts.length * 25;
  // On PostgreSQL the fan-out bursts run again on a second service (started, warmed up).
  const secondService =
    options.base.engines.includes('postgres') && options.fanOutCounts.length > 0
      ? 15 + (options.fanOutCounts.length + 1) * 20
      : 0;
  return Math.max(1, Math.ceil((perEngine * options.base.engines.length + secondService) / 60));
}

runBench('bench:webhooks', main, cleanups);
