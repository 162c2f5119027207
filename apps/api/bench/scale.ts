/**
 * `pnpm bench -- --plants N`: what each operation costs once the table holds N plants, beside what
 * it costs at 10,000, in the same run. Per engine, two services on fresh storage with production
 * settings: one loaded with 10,000 plants, one with N, both through `POST /plants/import` (timed).
 * Then, round after round, each row measured on the small service and at once on the large one, at
 * the budget concurrency: creates, reads by id on random ids, pages of 20 from random cursors
 * without and with a tag, the 400 path, and webhook fan-out to 10 subscriptions (a burst of creates
 * while the dispatcher delivers each to 10 receivers: deliveries per second). Then the database's
 * size on disk, each service's peak RSS, the embedded database's time to open with N plants, and
 * the statement-plan test (EXPLAIN ANALYZE of every statement on plants and events) at
 * min(N, 1,000,000) rows. Prints a table (scale-report.ts) and writes bench/results/scale.json.
 */
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import pg from 'pg';
import { benchPlant, invalidPlantJson, plantJson } from './bench-plants.js';
import { type BenchStorage, createBenchStorage, databaseBytes } from './bench-storage.js';
import { BUDGET_CONCURRENCY } from './budget.js';
import { startHttpCeiling } from './ceiling-process.js';
import { type Cleanups, gitCommit } from './entry-point.js';
import { type BenchRequest, measureHttp } from './http-load.js';
import type { BenchOptions, Engine } from './options.js';
import { postNdjson } from './post-ndjson.js';
import { sampleRss } from './process-memory.js';
import { describeMachine } from './report.js';
import { medianIndex } from './rounds.js';
import { runPlanTest } from './scale-plans.js';
import { formatScaleReport, SCALE_ROWS, type ScaleEngineResult, type ScaleRow } from './scale-report.js';
import { issueToken, productionEnv, type ServiceProcess, startService } from './service-process.js';
import { measureBacklog } from './webhooks-measure.js';

/** The size every row is compared with. */
export const SMALL_PLANTS = 10_000;
const TAGS = 10;
/** The embedded database imports in parts of this many lines (its memory grows with one import). */
const PGLITE_IMPORT_LINES = 100_000;
/** Fan-out: receivers (one subscription each), and the creates of each burst. */
const FAN_OUT_RECEIVERS = 10;
const FAN_OUT_CREATES = 1_000;
/** The statement-plan test's table, at most. */
const PLAN_ROWS_MAX = 1_000_000;

const progress = (text: string) => process.stderr.write(`${text}\n`);

/** The scale plants: ids 1..count, each with one of ten tags in turn. */
function scalePlantJson(id: number): string {
  return `{"id":${id},"name":"Scale plant ${id}","tag":"scale-${id % TAGS}"}`;
}

interface Sized {
  readonly plants: number;
  readonly env: Readonly<Record<string, string>>;
  readonly token: string;
  readonly service: ServiceProcess;
  readonly storage: BenchStorage;
  importSeconds: number;
  importPeakRss: number | undefined;
}

export async function runScaleBench(options: BenchOptions, plants: number, cleanups: Cleanups): Promise<number> {
  const resultsDir = dirname(options.outputFile);
  const logDir = join(resultsDir, 'logs');
  await mkdir(logDir, { recursive: true });
  const machine = describeMachine(gitCommit(options.apiRoot));
  const files = new Map<number, string>();
  for (const size of [SMALL_PLANTS, plants]) {
    const file = join(resultsDir, `scale-${size}.ndjson`);
    files.set(size, file);
    cleanups.add(`delete ${file}`, () => rm(file, { force: true }));
    progress(`writing ${size.toLocaleString('en-US')} plants to ${file}`);
    await writePlantsFile(file, size);
  }
  const http = await startHttpCeiling({
    apiRoot: options.apiRoot,
    env: options.childEnv,
    logFile: join(logDir, 'scale-http-ceiling.log'),
  });
  const stopHttp = cleanups.add('stop the HTTP ceiling', () => http.stop());
  const httpRates: number[] = [];
  const engines: ScaleEngineResult[] = [];
  for (const engine of options.engines) {
    engines.push(await benchEngine(options, engine, plants, files, cleanups, logDir, http.url, httpRates));
  }
  await stopHttp();
  const sortedHttp = [...httpRates].sort((a, b) => a - b);
  const report = {
    commit: machine.gitCommit,
    date: new Date().toISOString(),
    machine,
    plants,
    concurrency: BUDGET_CONCURRENCY,
    rounds: options.rounds,
    httpPerSecond: sortedHttp[Math.floor(sortedHttp.length / 2)] ?? 0,
    engines,
  };
  const output = join(resultsDir, 'scale.json');
  await writeFile(output, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`\n${formatScaleReport(report)}\nJSON: ${output}\n`);
  return 0;
}

async function benchEngine(
  options: BenchOptions,
  engine: Engine,
  plants: number,
  files: ReadonlyMap<number, string>,
  cleanups: Cleanups,
  logDir: string,
  httpUrl: string,
  httpRates: number[],
): Promise<ScaleEngineResult> {
  const sized: Sized[] = [];
  try {
    for (const size of [SMALL_PLANTS, plants]) {
      const storage = await createBenchStorage(options.serverUrl, engine, {
        cleanups,
        progress,
        label: `scale-${size}`,
      });
      // The fan-out's receivers listen on this machine.
      const env = productionEnv(options.childEnv, storage.env, { WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true' });
      const token = await issueToken(options.apiRoot, env, {
        name: 'scale',
        scopes: ['plants:read', 'plants:write', 'webhooks:manage'],
      });
      const service = await startService(options.apiRoot, env, join(logDir, `scale-${engine}-${size}.log`));
      cleanups.add(`stop the ${engine} service with ${size} plants`, () => service.stop());
      const entry: Sized = { plants: size, env, token, service, storage, importSeconds: 0, importPeakRss: undefined };
      sized.push(entry);
      progress(`${engine}: importing ${size.toLocaleString('en-US')} plants`);
      await importPlants(entry, files.get(size) ?? '', engine === 'pglite' ? PGLITE_IMPORT_LINES : size);
      progress(`${engine}: ${size.toLocaleString('en-US')} plants imported in ${entry.importSeconds.toFixed(1)} s`);
    }
    const [small, large] = sized as [Sized, Sized];
    // As after any bulk load (PostgreSQL's "Populating a Database": run ANALYZE afterwards), and so
    // that the rows measure the catalogue, not autovacuum and the checkpoint catching up with it.
    for (const entry of sized) await settle(entry.storage);
    const rowRounds = new Map<ScaleRow, Array<[number, number]>>();
    const unexpected = new Map<ScaleRow, [number, number]>();
    const peaks = sized.map((entry) => sampleRss(entry.service.pid));
    let nextId = 4n * 10n ** 18n;
    for (let round = 1; round <= options.rounds; round += 1) {
      progress(`${engine}: round ${round} of ${options.rounds}`);
      httpRates.push(
        (await measureHttp(httpLoad(httpUrl), BUDGET_CONCURRENCY, { seconds: options.durationSeconds })).perSecond,
      );
      for (const row of SCALE_ROWS) {
        const pair: number[] = [];
        // The size measured second shares the cores with the database's work on the first's writes:
        // the order alternates round by round so that neither size always pays for it.
        const sides = round % 2 === 1 ? ([0, 1] as const) : ([1, 0] as const);
        for (const side of sides) {
          const entry = side === 0 ? small : large;
          if (row === 'fan-out') {
            const result = await measureBacklog(
              { url: entry.service.url, token: entry.token, pid: entry.service.pid },
              engine,
              () => nextId++,
              FAN_OUT_RECEIVERS,
              { creates: FAN_OUT_CREATES, concurrency: BUDGET_CONCURRENCY, deliveryTimeoutMs: 300_000 },
            );
            if (result.missing > 0) throw new Error(`fan-out: ${result.missing} deliveries missing`);
            pair[side] = result.deliveriesPerSecond;
            continue;
          }
          const next = rowRequest(row, entry.plants, () => nextId++);
          const expectedStatus = row === 'invalid-body' ? 400 : 200;
          const load = { url: entry.service.url, token: entry.token, nextRequest: next, expectedStatus };
          if (options.warmupSeconds > 0)
            await measureHttp(load, BUDGET_CONCURRENCY, { seconds: options.warmupSeconds });
          const measured = await measureHttp(load, BUDGET_CONCURRENCY, { seconds: options.durationSeconds });
          if (measured.errors > 0) throw new Error(`${row} at ${entry.plants} plants: ${measured.errors} errors`);
          // Reported, not fatal: a row that answers 503s under load at N plants is a finding. Its rate
          // counts the expected answers only.
          const [smallCount, largeCount] = unexpected.get(row) ?? [0, 0];
          unexpected.set(
            row,
            side === 0
              ? [smallCount + measured.unexpected, largeCount]
              : [smallCount, largeCount + measured.unexpected],
          );
          if (measured.unexpected > 0) {
            progress(`${row} at ${entry.plants} plants: unexpected answers ${JSON.stringify(measured.statusCodes)}`);
          }
          pair[side] = (measured.completed - measured.unexpected) / options.durationSeconds;
        }
        const rounds = rowRounds.get(row) ?? [];
        rounds.push([pair[0] ?? 0, pair[1] ?? 0]);
        rowRounds.set(row, rounds);
      }
    }
    const [smallPeak, largePeak] = await Promise.all(peaks.map((peak) => peak.stop()));
    const rows = SCALE_ROWS.map((row) => {
      const rounds = rowRounds.get(row) ?? [];
      const pick = (side: 0 | 1) => {
        const values = rounds.map((pair) => pair[side]);
        return values[medianIndex(values)] ?? 0;
      };
      const [smallUnexpected, largeUnexpected] = unexpected.get(row) ?? [0, 0];
      return { row, small: pick(0), large: pick(1), rounds: rounds.length, smallUnexpected, largeUnexpected };
    });
    const result: ScaleEngineResult = {
      engine,
      plants,
      rows,
      importSeconds: { small: small.importSeconds, large: large.importSeconds },
      peakRss: {
        small: Math.max(smallPeak ?? 0, small.importPeakRss ?? 0),
        large: Math.max(largePeak ?? 0, large.importPeakRss ?? 0),
        largeImport: large.importPeakRss,
      },
      databaseBytes: await databaseBytes(large.storage),
    };
    if (engine === 'pglite') {
      await large.service.stop();
      progress(`${engine}: opening the embedded database with ${plants.toLocaleString('en-US')} plants`);
      const opening = performance.now();
      const reopened = await startService(options.apiRoot, large.env, join(logDir, `scale-${engine}-reopen.log`));
      result.openSeconds = (performance.now() - opening) / 1_000;
      await reopened.stop();
    }
    progress(`${engine}: the statement-plan test at ${Math.min(plants, PLAN_ROWS_MAX).toLocaleString('en-US')} rows`);
    result.plans = await runPlanTest(options, engine, Math.max(100_000, Math.min(plants, PLAN_ROWS_MAX)));
    return result;
  } finally {
    for (const entry of sized) {
      await entry.service.stop();
      await entry.storage.dispose();
    }
  }
}

/**
 * Imports `file` through the service, in parts of `partLines` lines (each part one import).
 */
async function importPlants(entry: Sized, file: string, partLines: number): Promise<void> {
  const rss = sampleRss(entry.service.pid);
  const started = performance.now();
  const lines = partLines >= entry.plants ? undefined : (await readFile(file, 'utf8')).split('\n');
  for (let from = 0; from < entry.plants; from += partLines) {
    const body =
      lines === undefined
        ? createReadStream(file)
        : Readable.from([`${lines.slice(from, Math.min(from + partLines, entry.plants)).join('\n')}\n`]);
    const { status, text } = await postNdjson(`${entry.service.url}/plants/import`, entry.token, body);
    if (status !== 200) throw new Error(`the import answered ${status}: ${text}`);
  }
  entry.importSeconds = (performance.now() - started) / 1_000;
  entry.importPeakRss = await rss.stop();
}

function rowRequest(row: ScaleRow, plants: number, nextId: () => bigint): () => BenchRequest {
  const randomId = () => 1 + Math.floor(Math.random() * plants);
  switch (row) {
    case 'create':
      return () => ({ method: 'POST', path: '/plants', body: plantJson(benchPlant(nextId())) });
    case 'invalid-body':
      return () => ({ method: 'POST', path: '/plants', body: invalidPlantJson(benchPlant(nextId())) });
    case 'get':
      return () => ({ method: 'GET', path: `/plants/${randomId()}` });
    case 'list':
      return () => ({ method: 'GET', path: `/plants?limit=20&after=${randomId()}` });
    case 'list-tag':
      return () => ({
        method: 'GET',
        path: `/plants?limit=20&tag=scale-${Math.floor(Math.random() * TAGS)}&after=${randomId()}`,
      });
    case 'fan-out':
      throw new Error('fan-out is a burst, not a load');
  }
}

function httpLoad(url: string) {
  return {
    url,
    token: undefined,
    nextRequest: (): BenchRequest => ({ method: 'GET', path: '/plants/1' }),
    expectedStatus: 200,
  };
}

async function writePlantsFile(file: string, count: number): Promise<void> {
  const out = createWriteStream(file);
  for (let start = 1; start <= count; start += 10_000) {
    const lines: string[] = [];
    for (let id = start; id < Math.min(count + 1, start + 10_000); id++) lines.push(scalePlantJson(id));
    if (!out.write(`${lines.join('\n')}\n`)) await once(out, 'drain');
  }
  await new Promise((resolve) => out.end(resolve));
}

/** VACUUM (ANALYZE) and a CHECKPOINT on PostgreSQL; nothing on the embedded database (it has no autovacuum to race). */
async function settle(storage: BenchStorage): Promise<void> {
  if (storage.url === undefined) return;
  const client = new pg.Client({ connectionString: storage.url });
  await client.connect();
  try {
    progress('postgres: VACUUM (ANALYZE) and CHECKPOINT after the import');
    await client.query('VACUUM (ANALYZE)');
    await client.query('CHECKPOINT');
  } finally {
    await client.end();
  }
}
