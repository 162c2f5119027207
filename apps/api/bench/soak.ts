/**
 * `pnpm soak -- --minutes N`: builds (through turbo), then runs the built service on a throwaway
 * PostgreSQL database with its production settings (access logs and metrics on, webhooks
 * dispatched) under mixed traffic for N minutes: creates, reads, lists, deletes, invalid bodies,
 * with one webhook subscription delivering to a receiver in this process. Every `--kill-every`
 * seconds it terminates all of the service's database connections (`pg_terminate_backend`), as a
 * failover or a proxy restart would. It prints the service's RSS over time, and at the end checks
 * that every create answered 200 and not deleted is stored, every delete answered 204 is gone,
 * every created plant's event was delivered, and RSS levelled off. Exit code 1 when a check fails.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { withServerClient } from '@plant-store/db/testing';
import { Agent, request } from 'undici';
import { benchPlant, createIdSequence, invalidPlantJson, plantJson } from './bench-plants.js';
import { Cleanups, gitCommit, runBench } from './entry-point.js';
import { formatMegabytes } from './figures.js';
import { readProcessMemory } from './process-memory.js';
import { describeMachine } from './report.js';
import { issueToken, startService } from './service-process.js';
import { checkServer, createBenchDatabase } from './throwaway-postgres.js';
import { subscribe } from './webhooks-client.js';
import { startReceiver } from './webhooks-receiver.js';

const USAGE = `Usage: pnpm soak [-- options]   (or: pnpm --filter @plant-store/api soak [options])

  --minutes N            how long the traffic runs                (default 30)
  --concurrency N        requests in flight at most               (default 16)
  --rate N               requests per second, all kinds together  (default 1000; 0: as fast as they answer)
  --kill-every SECONDS   terminate the service's database connections this often (default 30)
  --sample-every SECONDS RSS sample interval                      (default 10)
  --database-url URL     PostgreSQL server for a throwaway database
                         (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test)
  --output FILE          JSON results                             (default bench/results/soak-latest.json)
  --help                 this text`;

const API_ROOT = fileURLToPath(new URL('..', import.meta.url));
/** RSS may grow at most this much over the last two thirds of the run. */
const RSS_GROWTH_LIMIT = 0.1;
/** The end waits for the webhook backlog while deliveries keep arriving, up to this long without one. */
const DRAIN_STALL_MS = 60_000;

interface SoakOptions {
  readonly minutes: number;
  readonly concurrency: number;
  /** Requests per second across all workers; 0: no pacing. */
  readonly rate: number;
  readonly killEverySeconds: number;
  readonly sampleEverySeconds: number;
  readonly serverUrl: string;
  readonly outputFile: string;
}

/** What the traffic did, by operation and answer. */
interface Tally {
  requests: number;
  byOperation: Record<Operation, Record<string, number>>;
  /** 500s and other 5xx that are not the designed 503 of a database outage. */
  serverErrors: number;
  /** 503s: the database was unreachable (answered with Retry-After), nothing was written. */
  unavailable: number;
  /** Answers the contract does not allow for the request (e.g. a 400 for a valid create). */
  unexpected: number;
  /** The first few of them, to look into: what was asked, what came back, and when. */
  unexpectedSamples: UnexpectedAnswer[];
  /** Requests that got no answer at all (connection reset, timeout). */
  noAnswer: number;
}

type Operation = 'create' | 'get' | 'list' | 'delete' | 'invalid';

interface UnexpectedAnswer {
  readonly operation: Operation;
  readonly path: string;
  readonly status: number;
  /** The answer's body, cut to 300 characters. */
  readonly body: string;
  readonly atSeconds: number;
}
/** The mix, in parts of 100: creates dominate, then the reads; deletes and bad bodies are a steady minority. */
const MIX: readonly (readonly [Operation, number])[] = [
  ['create', 40],
  ['get', 20],
  ['list', 15],
  ['delete', 10],
  ['invalid', 15],
];

interface RssSample {
  readonly atSeconds: number;
  readonly rssBytes: number;
  readonly requestsPerSecond: number;
  readonly serverErrors: number;
  readonly unavailable: number;
}

const cleanups = new Cleanups();
const progress = (text: string) => process.stderr.write(`${text}\n`);

function loadOptions(argv: readonly string[], env: NodeJS.ProcessEnv): SoakOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      minutes: { type: 'string' },
      concurrency: { type: 'string' },
      rate: { type: 'string' },
      'kill-every': { type: 'string' },
      'sample-every': { type: 'string' },
      'database-url': { type: 'string' },
      output: { type: 'string' },
    },
  });
  const positive = (name: string, text: string | undefined, fallback: number): number => {
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number, not ${text}`);
    return value;
  };
  return {
    minutes: positive('minutes', values.minutes, 30),
    concurrency: Math.round(positive('concurrency', values.concurrency, 16)),
    rate: values.rate === '0' ? 0 : positive('rate', values.rate, 1000),
    killEverySeconds: positive('kill-every', values['kill-every'], 30),
    sampleEverySeconds: positive('sample-every', values['sample-every'], 10),
    serverUrl: values['database-url'] ?? env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    outputFile: resolve(values.output ?? join(API_ROOT, 'bench/results/soak-latest.json')),
  };
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2).filter((arg, index) => index > 0 || arg !== '--');
  if (argv.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let options: SoakOptions;
  try {
    options = loadOptions(argv, process.env);
  } catch (error) {
    process.stderr.write(`soak: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}\n`);
    return 2;
  }
  if (!existsSync(join(API_ROOT, 'dist/index.js'))) {
    process.stderr.write('soak: dist/index.js is missing: build first (the root `pnpm soak` does)\n');
    return 2;
  }
  await checkServer(options.serverUrl);
  const logDir = join(dirname(options.outputFile), 'logs');
  await mkdir(logDir, { recursive: true });
  const machine = describeMachine(gitCommit(API_ROOT));

  const database = await createBenchDatabase(options.serverUrl);
  cleanups.add(`drop database ${database.name}`, () => database.drop());
  const receiver = await startReceiver();
  cleanups.add('stop the webhook receiver', () => receiver.close());
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    DATABASE_URL: database.url,
    NODE_ENV: 'production',
    // Metrics measured and served on the API port, as the soak has always run them.
    METRICS_ON_API_PORT: 'true',
    WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
  };
  const token = await issueToken(API_ROOT, env, {
    name: 'soak',
    scopes: ['plants:read', 'plants:write', 'webhooks:manage'],
  });
  const serviceLog = join(logDir, 'soak-service.log');
  const service = await startService(API_ROOT, env, serviceLog);
  const stopService = cleanups.add('stop the service', () => service.stop());
  // The service must live through the whole soak: an exit ends the traffic and fails the run.
  let serviceExit: number | null | undefined;
  void service.exited.then((code) => {
    serviceExit = code;
  });
  await subscribe({ url: service.url, token, pid: service.pid }, receiver.url);
  progress(
    `soak: ${options.minutes} min on PostgreSQL (${database.name}), ${options.rate || 'unpaced'} req/s, ` +
      `at most ${options.concurrency} in flight, ` +
      `database connections killed every ${options.killEverySeconds} s. Service log: ${serviceLog}`,
  );

  const agent = new Agent({ connections: options.concurrency, keepAliveTimeout: 10_000 });
  cleanups.add('close the HTTP agent', () => agent.close());
  const tally: Tally = {
    requests: 0,
    byOperation: { create: {}, get: {}, list: {}, delete: {}, invalid: {} },
    serverErrors: 0,
    unavailable: 0,
    unexpected: 0,
    unexpectedSamples: [],
    noAnswer: 0,
  };
  /** Answered 200 to a create, and not (yet) deleted. */
  const stored = new Set<bigint>();
  /** Answered 204 to a delete. */
  const deleted = new Set<bigint>();
  /** Every id whose create answered 200: each one's event must be delivered. */
  const created: bigint[] = [];
  /** Creates with no answer or a 503: stored or not, nobody knows; not checked either way. */
  const uncertain = new Set<bigint>();
  const nextId = createIdSequence();
  const storedList: bigint[] = [];

  const started = performance.now();
  const endAt = started + options.minutes * 60_000;
  let stopping = false;

  const send = async (
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: string,
  ): Promise<{ status: number; text: string } | null> => {
    tally.requests++;
    try {
      const response = await request(`${service.url}${path}`, {
        method,
        dispatcher: agent,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body }),
        headersTimeout: 30_000,
        bodyTimeout: 30_000,
      });
      const text = await response.body.text();
      if (response.statusCode === 503) tally.unavailable++;
      else if (response.statusCode >= 500) tally.serverErrors++;
      return { status: response.statusCode, text };
    } catch {
      tally.noAnswer++;
      return null;
    }
  };
  const noteUnexpected = (operation: Operation, path: string, answer: { status: number; text: string }) => {
    tally.unexpected++;
    if (tally.unexpectedSamples.length >= 20) return;
    const atSeconds = (performance.now() - started) / 1000;
    tally.unexpectedSamples.push({
      operation,
      path,
      status: answer.status,
      body: answer.text.slice(0, 300),
      atSeconds,
    });
  };
  const count = (operation: Operation, answer: { status: number } | null) => {
    const key = answer === null ? 'no answer' : String(answer.status);
    const counts = tally.byOperation[operation];
    counts[key] = (counts[key] ?? 0) + 1;
  };
  const pickStored = (): bigint | undefined => {
    // storedList holds every id once stored; deleted ones are skipped lazily.
    for (let tries = 0; tries < 8 && storedList.length > 0; tries++) {
      const id = storedList[Math.floor(Math.random() * storedList.length)] as bigint;
      if (stored.has(id)) return id;
    }
    return undefined;
  };

  const runOne = async (): Promise<void> => {
    const roll = Math.random() * 100;
    let operation: Operation = 'create';
    for (let sum = 0, index = 0; index < MIX.length; index++) {
      const [name, weight] = MIX[index] as readonly [Operation, number];
      sum += weight;
      if (roll < sum) {
        operation = name;
        break;
      }
    }
    switch (operation) {
      case 'create': {
        const id = nextId();
        const answer = await send('POST', '/plants', plantJson(benchPlant(id)));
        count(operation, answer);
        if (answer?.status === 200) {
          stored.add(id);
          storedList.push(id);
          created.push(id);
        } else if (answer === null || answer.status === 503) {
          uncertain.add(id);
        } else {
          noteUnexpected(operation, '/plants', answer);
        }
        return;
      }
      case 'get': {
        const id = pickStored();
        if (id === undefined) return;
        const answer = await send('GET', `/plants/${id}`);
        count(operation, answer);
        // A delete of this id may be in flight: 404 then is right too.
        if (
          answer !== null &&
          answer.status !== 200 &&
          answer.status !== 503 &&
          !(answer.status === 404 && !stored.has(id))
        ) {
          noteUnexpected(operation, `/plants/${id}`, answer);
        }
        return;
      }
      case 'list': {
        const after = pickStored();
        const query = after === undefined || Math.random() < 0.2 ? '' : `&after=${after}`;
        const tag = Math.random() < 0.5 ? '&tag=bench' : '';
        const path = `/plants?limit=20${tag}${query}`;
        const answer = await send('GET', path);
        count(operation, answer);
        if (answer !== null && answer.status !== 200 && answer.status !== 503) noteUnexpected(operation, path, answer);
        return;
      }
      case 'delete': {
        const id = pickStored();
        if (id === undefined) return;
        // Out of the stored set while the delete is in flight: no read expects it meanwhile.
        stored.delete(id);
        const answer = await send('DELETE', `/plants/${id}`);
        count(operation, answer);
        if (answer?.status === 204) deleted.add(id);
        else if (answer?.status === 503 || answer === null) {
          // Not known whether it went: checked neither way.
          uncertain.add(id);
        } else if (answer !== null) {
          noteUnexpected(operation, `/plants/${id}`, answer);
        }
        return;
      }
      case 'invalid': {
        const answer = await send('POST', '/plants', invalidPlantJson(benchPlant(nextId())));
        count(operation, answer);
        // Authenticated first: a token the cache does not hold is looked up in the database,
        // which may be away (the killed connections) and is then answered 503, as any request is.
        if (answer !== null && answer.status !== 400 && answer.status !== 503) {
          noteUnexpected(operation, '/plants', answer);
        }
        return;
      }
    }
  };

  // Paced: each request takes the next slot of a shared schedule, so the rate holds whatever the
  // latency (a soak is a long, steady load; a stress test would outrun the webhook dispatcher).
  let nextSlot = performance.now();
  const interval = options.rate > 0 ? 1000 / options.rate : 0;
  const workers = Array.from({ length: options.concurrency }, async () => {
    while (!stopping && serviceExit === undefined && performance.now() < endAt) {
      if (interval > 0) {
        const slot = Math.max(nextSlot, performance.now() - 1000);
        nextSlot = slot + interval;
        const wait = slot - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      }
      await runOne();
    }
  });

  const kills: { atSeconds: number; terminated: number }[] = [];
  const killTimer = setInterval(() => {
    void withServerClient(options.serverUrl, 'soak', (client) =>
      client.query<{ terminated: boolean }>(
        'SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [database.name],
      ),
    ).then(
      (result) => {
        const terminated = result.rows.filter((row) => row.terminated).length;
        kills.push({ atSeconds: (performance.now() - started) / 1000, terminated });
      },
      (error: unknown) => progress(`soak: could not kill connections: ${String(error)}`),
    );
  }, options.killEverySeconds * 1000);
  cleanups.add('stop killing connections', async () => clearInterval(killTimer));

  const samples: RssSample[] = [];
  let lastRequests = 0;
  let lastAt = started;
  const sample = async () => {
    const memory = await readProcessMemory(service.pid);
    const now = performance.now();
    const rate = ((tally.requests - lastRequests) * 1000) / (now - lastAt);
    lastRequests = tally.requests;
    lastAt = now;
    if (memory === undefined) return;
    const point: RssSample = {
      atSeconds: Math.round((now - started) / 1000),
      rssBytes: memory.rssBytes,
      requestsPerSecond: Math.round(rate),
      serverErrors: tally.serverErrors,
      unavailable: tally.unavailable,
    };
    samples.push(point);
    progress(
      `  ${String(point.atSeconds).padStart(5)} s  RSS ${formatMegabytes(point.rssBytes).padStart(6)} MB  ` +
        `${String(point.requestsPerSecond).padStart(6)} req/s  5xx ${point.serverErrors}  503 ${point.unavailable}  ` +
        `stored ${stored.size}`,
    );
  };
  const sampleTimer = setInterval(() => void sample(), options.sampleEverySeconds * 1000);
  cleanups.add('stop sampling', async () => clearInterval(sampleTimer));

  await Promise.all(workers);
  stopping = true;
  clearInterval(killTimer);
  clearInterval(sampleTimer);
  await sample();
  const trafficSeconds = (performance.now() - started) / 1000;

  progress(`soak: traffic done after ${Math.round(trafficSeconds)} s; waiting for the webhook backlog`);
  let undelivered = created.length;
  for (let arrived = -1; serviceExit === undefined; ) {
    undelivered = await receiver.waitForAll(created, DRAIN_STALL_MS);
    const now = receiver.firstArrivals.size;
    if (undelivered === 0 || now === arrived) break;
    arrived = now;
    progress(`  ${undelivered} events still to arrive`);
  }

  // What the database holds, read directly (not through the service).
  const ids = await withServerClient(database.url, 'soak', (client) =>
    client.query<{ id: string }>('SELECT id::text AS id FROM plants'),
  );
  const inDatabase = new Set(ids.rows.map((row) => BigInt(row.id)));
  const lost = [...stored].filter((id) => !inDatabase.has(id) && !uncertain.has(id));
  const resurrected = [...deleted].filter((id) => inDatabase.has(id) && !uncertain.has(id));
  const known = new Set([...created, ...uncertain]);
  const invented = [...inDatabase].filter((id) => !known.has(id));

  // Judged before the service is stopped here (that exit is not a failure).
  const ranToEnd = serviceExit === undefined;
  await stopService();

  const growth = rssGrowth(samples, trafficSeconds);
  const receiverCounts = receiver.counts();
  const checks = [
    check(
      'the service ran to the end',
      ranToEnd,
      ranToEnd ? 'yes' : `it exited (code ${serviceExit}); see ${serviceLog}`,
    ),
    check(
      'no request answered 500 (or another 5xx than the outage 503)',
      tally.serverErrors === 0,
      `${tally.serverErrors}`,
    ),
    check(
      'no answer the contract does not allow',
      tally.unexpected === 0,
      `${tally.unexpected}${describeUnexpected(tally.unexpectedSamples[0])}`,
    ),
    check(
      'every create answered 200 and not deleted is stored',
      lost.length === 0,
      `${lost.length} lost of ${stored.size}`,
    ),
    check('every delete answered 204 is gone', resurrected.length === 0, `${resurrected.length} still stored`),
    check('nothing stored that no create sent', invented.length === 0, `${invented.length}`),
    check(
      "every created plant's event was delivered",
      undelivered === 0,
      `${undelivered} of ${created.length} missing; ${receiverCounts.posts} POSTs, ${receiverCounts.duplicates} repeats`,
    ),
    check(
      `RSS levelled off: at most ${Math.round(RSS_GROWTH_LIMIT * 100)}% growth over the last two thirds`,
      growth !== null && growth.ratio <= 1 + RSS_GROWTH_LIMIT,
      growth === null
        ? 'too few samples'
        : `${formatMegabytes(growth.fromBytes)} MB at one third -> ${formatMegabytes(growth.toBytes)} MB at the end (${((growth.ratio - 1) * 100).toFixed(1)}%)`,
    ),
  ];

  const summary = [
    '',
    `soak: ${(trafficSeconds / 60).toFixed(1)} min, ${tally.requests} requests (${Math.round(tally.requests / trafficSeconds)}/s), ` +
      `${kills.length} connection kills (${kills.reduce((sum, kill) => sum + kill.terminated, 0)} connections terminated)`,
    `answers: ${Object.entries(tally.byOperation)
      .map(([operation, counts]) => `${operation} ${JSON.stringify(counts)}`)
      .join('; ')}`,
    `5xx other than 503: ${tally.serverErrors}; 503 (database unavailable, Retry-After): ${tally.unavailable}; no answer: ${tally.noAnswer}`,
    `creates answered 200: ${created.length}; deleted (204): ${deleted.size}; uncertain (503 or no answer): ${uncertain.size}; in the database: ${inDatabase.size}`,
    '',
    'RSS over time (MB):',
    formatSeries(samples),
    '',
    ...checks.map((line) => `${line.ok ? 'PASS' : 'FAIL'}  ${line.what}: ${line.detail}`),
    '',
    `${machine.cpus} CPUs (${machine.cpuModel}), Node ${machine.node}, commit ${machine.gitCommit ?? 'unknown'}; the soak, the service and PostgreSQL share these CPUs.`,
  ];
  process.stdout.write(`${summary.join('\n')}\n`);
  await mkdir(dirname(options.outputFile), { recursive: true });
  await writeFile(
    options.outputFile,
    `${JSON.stringify(
      {
        startedAt: new Date(Date.now() - trafficSeconds * 1000).toISOString(),
        machine,
        options: { ...options, serverUrl: undefined },
        tally,
        kills,
        samples,
        checks,
      },
      null,
      2,
    )}\n`,
  );
  process.stdout.write(`JSON: ${options.outputFile}\n`);
  await cleanups.runAll();
  return checks.every((line) => line.ok) ? 0 : 1;
}

function check(what: string, ok: boolean, detail: string) {
  return { what, ok, detail };
}

/**
 * RSS growth over the last two thirds: the median of the samples around the one-third mark
 * (a sixth of the run wide) against the median of the last sixth. Medians, because RSS saws up
 * and down with each garbage collection; one high sample is not growth.
 */
function rssGrowth(
  samples: readonly RssSample[],
  seconds: number,
): { fromBytes: number; toBytes: number; ratio: number } | null {
  const window = (from: number, to: number) =>
    samples.filter((s) => s.atSeconds >= from && s.atSeconds <= to).map((s) => s.rssBytes);
  const third = seconds / 3;
  const from = median(window(third - seconds / 12, third + seconds / 12));
  const to = median(window(seconds - seconds / 6, seconds));
  if (from === undefined || to === undefined) return null;
  return { fromBytes: from, toBytes: to, ratio: to / from };
}

function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** The samples as rows of `minute  RSS`, at most 40 rows (evenly thinned). */
function formatSeries(samples: readonly RssSample[]): string {
  const step = Math.max(1, Math.ceil(samples.length / 40));
  return samples
    .filter((_, index) => index % step === 0 || index === samples.length - 1)
    .map(
      (s) =>
        `  ${(s.atSeconds / 60).toFixed(1).padStart(5)} min  ${formatMegabytes(s.rssBytes).padStart(6)}  ` +
        `${String(s.requestsPerSecond).padStart(6)} req/s`,
    )
    .join('\n');
}

runBench('soak', main, cleanups);

/** The first unexpected answer, for the summary line (all of them, up to 20, are in the JSON). */
function describeUnexpected(sample: UnexpectedAnswer | undefined): string {
  if (sample === undefined) return '';
  return `; the first: ${sample.operation} ${sample.path} answered ${sample.status} at ${sample.atSeconds.toFixed(1)} s (${sample.body})`;
}
