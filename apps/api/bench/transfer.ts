/**
 * `pnpm bench:transfer -- --plants N`: loads N plants into a fresh service through
 * `POST /plants/import` and takes them out again through `GET /plants/export`, on PostgreSQL and on
 * the embedded database, and beside them the ceilings on the same machine and the same rows: a raw
 * `COPY ... FROM STDIN` into a table like `plants` (its indexes, no events), the same followed by
 * a raw `COPY` of their plant.created events (the rows the import writes for them, as it writes
 * them) into a table like `webhook_events` (its indexes), and a raw `COPY (the export's query) TO
 * STDOUT`. Also: the service's peak RSS during each, creates per
 * second from another token before and during the import (cross traffic), the database's size on
 * disk, and (embedded) the time to open the database with N plants. Prints a table; writes
 * bench/results/transfer.json.
 */
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { createBenchStorage, databaseBytes } from './bench-storage.js';
import { Cleanups, gitCommit, runBench } from './entry-point.js';
import { measureHttp } from './http-load.js';
import { ENGINES, type Engine } from './options.js';
import { postNdjson } from './post-ndjson.js';
import { sampleRss } from './process-memory.js';
import { issueToken, startService } from './service-process.js';

const cleanups = new Cleanups();
const progress = (text: string) => process.stderr.write(`${text}\n`);
const API_ROOT = new URL('..', import.meta.url).pathname;

/** Cross traffic: creates from another token, this many connections, this long (before, and during the import). */
const CROSS_CONCURRENCY = 8;
const CROSS_SECONDS = 10;

interface EngineResult {
  engine: Engine;
  plants: number;
  importSeconds: number;
  importRss: number | undefined;
  exportSeconds: number;
  exportBytes: number;
  exportRss: number | undefined;
  createsPerSecondBefore: number;
  createsPerSecondDuring: number;
  rawCopyInSeconds?: number;
  /** The raw COPY of the events alone, after the plants' (their sum: the ceiling with events). */
  rawCopyEventsSeconds?: number;
  rawCopyOutSeconds?: number;
  databaseBytes: number;
  openSeconds?: number;
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2).filter((arg, index) => index > 0 || arg !== '--');
  const { values } = parseArgs({
    args: argv,
    options: { plants: { type: 'string' }, engines: { type: 'string' }, 'database-url': { type: 'string' } },
  });
  const plants = Number(values.plants ?? process.env.BENCH_PLANTS ?? 100_000);
  if (!Number.isInteger(plants) || plants < 1) throw new Error('--plants must be a positive integer');
  const engines = (values.engines ?? process.env.BENCH_ENGINES ?? 'postgres,pglite').split(',') as Engine[];
  for (const engine of engines) if (!ENGINES.includes(engine)) throw new Error(`unknown engine ${engine}`);
  const serverUrl =
    values['database-url'] ?? process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const resultsDir = join(API_ROOT, 'bench/results');
  await mkdir(join(resultsDir, 'logs'), { recursive: true });

  const file = join(resultsDir, `transfer-${plants}.ndjson`);
  const copyFile = join(resultsDir, `transfer-${plants}.copy`);
  const eventsCopyFile = join(resultsDir, `transfer-${plants}.events.copy`);
  progress(`writing ${plants} plants to ${file} (and as COPY text for the raw ceiling)`);
  await writePlants(file, copyFile, eventsCopyFile, plants);
  cleanups.add('delete the plant files', async () => {
    const { rm } = await import('node:fs/promises');
    await rm(file, { force: true });
    await rm(copyFile, { force: true });
    await rm(eventsCopyFile, { force: true });
  });

  const results: EngineResult[] = [];
  for (const engine of engines)
    results.push(await benchEngine(engine, plants, file, [copyFile, eventsCopyFile], serverUrl));
  await cleanups.runAll();
  const report = { commit: gitCommit(API_ROOT), date: new Date().toISOString(), results };
  await writeFile(join(resultsDir, 'transfer.json'), `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${formatResults(results)}\n`);
  return 0;
}

async function benchEngine(
  engine: Engine,
  plants: number,
  file: string,
  copyFiles: readonly [plants: string, events: string],
  serverUrl: string,
): Promise<EngineResult> {
  const storage = await createBenchStorage(serverUrl, engine, { cleanups, progress, label: 'transfer' });
  const env: Record<string, string> = {
    ...(process.env.PATH === undefined ? {} : { PATH: process.env.PATH }),
    ...storage.env,
    NODE_ENV: 'production',
    ALLOW_EMBEDDED_DATABASE: 'true',
    LOG_LEVEL: 'warn',
    SHUTDOWN_TIMEOUT_MS: '5000',
  };
  const importer = await issueToken(API_ROOT, env, { name: 'importer', scopes: ['plants:read', 'plants:write'] });
  const other = await issueToken(API_ROOT, env, { name: 'other-team', scopes: ['plants:write'] });
  const logFile = join(API_ROOT, `bench/results/logs/transfer-${engine}.log`);
  let service = await startService(API_ROOT, env, logFile);
  const stopService = cleanups.add(`stop the ${engine} service`, () => service.stop());
  let nextCrossId = 10n ** 15n;
  const crossTraffic = () =>
    measureHttp(
      {
        url: service.url,
        token: other,
        nextRequest: () => ({ method: 'POST', path: '/plants', body: `{"id":${nextCrossId++},"name":"cross"}` }),
        expectedStatus: 200,
      },
      CROSS_CONCURRENCY,
      { seconds: CROSS_SECONDS },
    );
  try {
    progress(`${engine}: creates from another token, alone`);
    const before = await crossTraffic();
    progress(`${engine}: importing ${plants} plants, with the same creates beside it`);
    const importRss = sampleRss(service.pid);
    const importStarted = performance.now();
    const during = crossTraffic();
    const imported = await postNdjson(`${service.url}/plants/import`, importer, createReadStream(file));
    const importAnswer = imported.text;
    const importSeconds = (performance.now() - importStarted) / 1_000;
    const crossDuring = await during;
    if (imported.status !== 200) throw new Error(`the import answered ${imported.status}: ${importAnswer}`);
    progress(`${engine}: imported in ${importSeconds.toFixed(1)} s: ${importAnswer}`);
    const importPeak = await importRss.stop();

    progress(`${engine}: exporting`);
    const exportRss = sampleRss(service.pid);
    const exportStarted = performance.now();
    const exported = await fetch(`${service.url}/plants/export`, { headers: { authorization: `Bearer ${importer}` } });
    let exportBytes = 0;
    for await (const chunk of exported.body as unknown as AsyncIterable<Uint8Array>) exportBytes += chunk.length;
    const exportSeconds = (performance.now() - exportStarted) / 1_000;
    const exportPeak = await exportRss.stop();

    const result: EngineResult = {
      engine,
      plants,
      importSeconds,
      importRss: importPeak,
      exportSeconds,
      exportBytes,
      exportRss: exportPeak,
      createsPerSecondBefore: before.completed / CROSS_SECONDS,
      createsPerSecondDuring: crossDuring.completed / CROSS_SECONDS,
      databaseBytes: 0,
    };
    if (engine === 'postgres' && storage.url !== undefined) {
      Object.assign(result, await rawCopies(storage.url, copyFiles));
      result.databaseBytes = await databaseBytes(storage);
    } else {
      await service.stop();
      result.databaseBytes = await databaseBytes(storage);
      progress(`${engine}: opening the embedded database with ${plants} plants`);
      const opening = performance.now();
      service = await startService(API_ROOT, env, logFile);
      result.openSeconds = (performance.now() - opening) / 1_000;
    }
    return result;
  } finally {
    await stopService();
    await storage.dispose();
  }
}

/**
 * The ceilings: COPY of the same rows into a table like plants (its indexes), then of their events
 * into a table like webhook_events (its indexes), and COPY of the export's query out.
 */
async function rawCopies(
  url: string,
  [copyFile, eventsCopyFile]: readonly [string, string],
): Promise<Pick<EngineResult, 'rawCopyInSeconds' | 'rawCopyEventsSeconds' | 'rawCopyOutSeconds'>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('CREATE TABLE raw_copy_plants (LIKE public.plants INCLUDING ALL)');
    progress('postgres: raw COPY of the same rows into an indexed table like plants');
    const inStarted = performance.now();
    await pipeline(
      createReadStream(copyFile),
      client.query(copyFrom('COPY raw_copy_plants (id, name, tag) FROM STDIN')),
    );
    const rawCopyInSeconds = (performance.now() - inStarted) / 1_000;
    await client.query('CREATE TABLE raw_copy_events (LIKE public.webhook_events INCLUDING ALL)');
    progress('postgres: raw COPY of their events into an indexed table like webhook_events');
    const eventsStarted = performance.now();
    await pipeline(
      createReadStream(eventsCopyFile),
      client.query(
        copyFrom(
          'COPY raw_copy_events (id, seq, plant_id, type, version, payload, envelope, fanned_out_at) FROM STDIN',
        ),
      ),
    );
    const rawCopyEventsSeconds = (performance.now() - eventsStarted) / 1_000;
    progress('postgres: raw COPY of the export query out');
    const outStarted = performance.now();
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    await client.query('SET LOCAL enable_sort = off');
    const out = client.query(
      copyTo(
        `COPY (SELECT '{"id":' || id::text || ',"name":' || to_json(name)::text || coalesce(',"tag":' || to_json(tag)::text, '') || '}' FROM public.plants ORDER BY id) TO STDOUT (FORMAT csv, DELIMITER E'\\x02', QUOTE E'\\x01')`,
      ),
    );
    for await (const _ of out) {
      // Read and dropped, as fast as it comes.
    }
    await client.query('COMMIT');
    return { rawCopyInSeconds, rawCopyEventsSeconds, rawCopyOutSeconds: (performance.now() - outStarted) / 1_000 };
  } finally {
    await client.end();
  }
}

/**
 * N plants, ids 1..N, every tenth tagged: as NDJSON for the import, as COPY text for the ceiling,
 * and their plant.created events as COPY text, each row as the import writes it (ascending
 * `msg_` UUIDv7-shaped ids, the payload, the envelope with its version, fanned out: no subscription).
 */
async function writePlants(file: string, copyFile: string, eventsCopyFile: string, count: number): Promise<void> {
  const timestamp = new Date().toISOString();
  const files = [createWriteStream(file), createWriteStream(copyFile), createWriteStream(eventsCopyFile)] as const;
  for (let start = 1; start <= count; start += 10_000) {
    const pieces: [string[], string[], string[]] = [[], [], []];
    for (let id = start; id < Math.min(count + 1, start + 10_000); id++) {
      const tag = id % 10 === 0 ? 'tenth' : undefined;
      const plant = `{"id":${id},"name":"plant ${id}"${tag === undefined ? '' : `,"tag":"${tag}"`}`;
      pieces[0].push(`${plant}}`);
      pieces[1].push(`${id}\tplant ${id}\t${tag ?? '\\N'}`);
      const eventId = `msg_019ac000-0000-7000-8000-${id.toString(16).padStart(12, '0')}`;
      const envelope = `{"type":"plant.created","timestamp":"${timestamp}","data":${plant},"version":${id}}}`;
      pieces[2].push(`${eventId}\t${id}\t${id}\tplant.created\t${id}\t${plant}}\t${envelope}\t${timestamp}`);
    }
    for (const [index, out] of files.entries()) {
      if (!out.write(`${pieces[index]?.join('\n')}\n`)) await once(out, 'drain');
    }
  }
  await Promise.all(files.map((out) => new Promise((resolve) => out.end(resolve))));
}

function formatResults(results: readonly EngineResult[]): string {
  const mb = (bytes: number | undefined) => (bytes === undefined ? '-' : `${(bytes / 1_048_576).toFixed(0)} MB`);
  const rate = (rows: number, seconds: number | undefined) =>
    seconds === undefined ? '-' : `${Math.round(rows / seconds).toLocaleString('en-US')}/s`;
  const lines = [
    '| engine | plants | import | raw COPY in | ratio | raw COPY in, with events | ratio | export | raw COPY out | ratio | peak RSS import / export | creates/s alone / during import | database size | open |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const r of results) {
    const inRatio = r.rawCopyInSeconds === undefined ? '-' : (r.rawCopyInSeconds / r.importSeconds).toFixed(2);
    const withEvents =
      r.rawCopyInSeconds === undefined || r.rawCopyEventsSeconds === undefined
        ? undefined
        : r.rawCopyInSeconds + r.rawCopyEventsSeconds;
    const withEventsRatio = withEvents === undefined ? '-' : (withEvents / r.importSeconds).toFixed(2);
    const outRatio = r.rawCopyOutSeconds === undefined ? '-' : (r.rawCopyOutSeconds / r.exportSeconds).toFixed(2);
    lines.push(
      `| ${r.engine} | ${r.plants.toLocaleString('en-US')} | ${r.importSeconds.toFixed(1)} s (${rate(r.plants, r.importSeconds)}) | ` +
        `${r.rawCopyInSeconds === undefined ? '-' : `${r.rawCopyInSeconds.toFixed(1)} s (${rate(r.plants, r.rawCopyInSeconds)})`} | ${inRatio} | ` +
        `${withEvents === undefined ? '-' : `${withEvents.toFixed(1)} s (${rate(r.plants, withEvents)})`} | ${withEventsRatio} | ` +
        `${r.exportSeconds.toFixed(1)} s (${rate(r.plants, r.exportSeconds)}) | ` +
        `${r.rawCopyOutSeconds === undefined ? '-' : `${r.rawCopyOutSeconds.toFixed(1)} s (${rate(r.plants, r.rawCopyOutSeconds)})`} | ${outRatio} | ` +
        `${mb(r.importRss)} / ${mb(r.exportRss)} | ${Math.round(r.createsPerSecondBefore)} / ${Math.round(r.createsPerSecondDuring)} | ` +
        `${mb(r.databaseBytes)} | ${r.openSeconds === undefined ? '-' : `${r.openSeconds.toFixed(1)} s`} |`,
    );
  }
  return lines.join('\n');
}

runBench('bench:transfer', main, cleanups);
