import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '@plant-store/db';
import { testEngines, testToken } from '@plant-store/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READINESS_MAX_AGE_MS } from './health/readiness.js';
import { checkedFetch, failOnContractViolations } from './test-support/checked-fetch.js';
import { type ServiceProcess, startServiceProcess } from './test-support/service-process.js';
import { startThrowawayPostgres, type ThrowawayPostgres } from './test-support/throwaway-postgres.js';

failOnContractViolations();

/** Every answer while the database is out must come within this (no hanging sockets). */
const ANSWER_WITHIN_MS = 2_000;
/** A request not answered by then is recorded as hanging (the client gives up). */
const CLIENT_TIMEOUT_MS = 5_000;
const WRITERS = 8;
const OUTAGE_MS = 2_500;
/** How long the service may take to serve again once the database is back. */
const RECOVERY_WITHIN_MS = 10_000;

interface Answer {
  readonly path: string;
  readonly id: bigint | undefined;
  readonly startedAt: number;
  readonly endedAt: number;
  /** The HTTP status, or why none came. */
  readonly status: number | 'hung' | 'network';
  readonly retryAfter: string | null;
  readonly body: unknown;
}

async function send(url: string, path: string, token: string, id?: bigint): Promise<Answer> {
  const startedAt = performance.now();
  const init: RequestInit = {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
  };
  if (id !== undefined) {
    init.method = 'POST';
    init.body = `{"id": ${id}, "name": "p${id}"}`;
    init.headers = { ...init.headers, 'content-type': 'application/json' };
  }
  try {
    const response = await checkedFetch(new URL(path, url), init);
    const text = await response.text();
    return {
      path,
      id,
      startedAt,
      endedAt: performance.now(),
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: text === '' ? undefined : JSON.parse(text),
    };
  } catch (error) {
    const hung = error instanceof Error && error.name === 'TimeoutError';
    return {
      path,
      id,
      startedAt,
      endedAt: performance.now(),
      status: hung ? 'hung' : 'network',
      retryAfter: null,
      body: String(error),
    };
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function describeAnswer(answer: Answer): string {
  return `${answer.path} ${answer.id ?? ''} -> ${answer.status} after ${Math.round(answer.endedAt - answer.startedAt)} ms: ${JSON.stringify(answer.body)}`;
}

/** A 503 as the contract describes it: Error shape, `error` 503, a Retry-After in seconds. */
function isUnavailableAnswer(answer: Answer): boolean {
  const body = answer.body as { error?: unknown; message?: unknown } | undefined;
  return (
    answer.status === 503 &&
    /^\d+$/.test(answer.retryAfter ?? '') &&
    body?.error === 503 &&
    typeof body.message === 'string'
  );
}

/** Answered within the bound the outage must keep. */
function isPrompt(answer: Answer): boolean {
  return answer.endedAt - answer.startedAt < ANSWER_WITHIN_MS;
}

/** The service's distinct logged request failures (why a 500 was a 500), for failure messages. */
function loggedFailures(service: ServiceProcess): string {
  const failures = service
    .output()
    .split('\n')
    .filter((line) => line.includes('request failed'))
    .map((line) => line.replace(/"time":"[^"]*",?/, '').slice(0, 600));
  return `service logged:\n${[...new Set(failures)].slice(0, 5).join('\n')}`;
}

describe.skipIf(!testEngines().includes('postgres'))('database outage (own throwaway PostgreSQL)', () => {
  let postgres: ThrowawayPostgres | undefined;
  let service: ServiceProcess | undefined;
  let scratch: string | undefined;
  let token = '';
  let nextId = 1n;

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'plant-store-outage-'));
    postgres = await startThrowawayPostgres();
    const env = { DATABASE_URL: postgres.url, DATA_DIR: scratch, NODE_ENV: 'production' };
    service = await startServiceProcess(env);
    const db = await openDatabase({ url: postgres.url, dataDir: scratch });
    try {
      // A limit of its own far above the load: every request is counted, none is refused.
      token = (
        await db.issueToken(
          testToken({
            name: 'outage',
            scopes: ['plants:read', 'plants:write'],
            rateLimit: { requests: 1_000_000, perSeconds: 1 },
          }),
        )
      ).token;
    } finally {
      await db.close();
    }
  });

  afterAll(async () => {
    await service?.kill();
    await postgres?.dispose();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  const outages: Array<[string, (db: ThrowawayPostgres) => Promise<void>, (db: ThrowawayPostgres) => Promise<void>]> = [
    ['stopped with pg_ctl -m immediate (a crash)', (db) => db.stop('immediate'), (db) => db.start()],
    ['stopped with pg_ctl -m fast', (db) => db.stop('fast'), (db) => db.start()],
    ['frozen with SIGSTOP (open sockets, no answers)', (db) => db.freeze(), (db) => db.thaw()],
  ];

  it.each(outages)(
    'answers 503 quickly while the database is %s, stays up, and resumes by itself',
    async (_name, disrupt, restore) => {
      if (!postgres || !service) throw new Error('set-up failed');
      const { url } = service;
      const db = postgres;
      const answers: Answer[] = [];
      const probes: Answer[] = [];
      let writing = true;
      const writer = async () => {
        while (writing) {
          const answer = await send(url, '/plants', token, nextId++);
          answers.push(answer);
          // Not a tight loop against a failing service: a real client would honour Retry-After.
          if (answer.status !== 200) await sleep(25);
        }
      };
      const writers = Array.from({ length: WRITERS }, writer);
      const answered200 = () => answers.filter((answer) => answer.status === 200).length;
      let disruptStarted = Number.NaN;
      let disrupted = Number.NaN;
      let restoreStarted = Number.NaN;
      let restored = Number.NaN;
      let recoveredAt: number | undefined;
      try {
        for (const deadline = performance.now() + 5_000; answered200() < 50 && performance.now() < deadline; ) {
          await sleep(20);
        }
        disruptStarted = performance.now();
        await disrupt(db);
        disrupted = performance.now();
        try {
          for (const until = disrupted + OUTAGE_MS; performance.now() < until; ) {
            probes.push(await send(url, '/readyz', token), await send(url, '/healthz', token));
            await sleep(200);
          }
        } finally {
          // Even when something above failed: the next test needs the database.
          restoreStarted = performance.now();
          await restore(db);
          restored = performance.now();
        }
        for (const deadline = restored + RECOVERY_WITHIN_MS; performance.now() < deadline; ) {
          await sleep(20);
          recoveredAt = answers.find((answer) => answer.startedAt >= restored && answer.status === 200)?.startedAt;
          if (recoveredAt !== undefined) break;
        }
        await sleep(1_000);
      } finally {
        writing = false;
        await Promise.all(writers);
      }
      const after = await send(url, '/readyz', token);
      expect(
        answers.filter((answer) => answer.startedAt < disruptStarted && answer.status === 200).length,
      ).toBeGreaterThanOrEqual(50);

      // Answers to anything sent from the disruption until the database was back. Outside that
      // window a busy machine may be slow; inside it, slowness would mean waiting on a dead database.
      const outage = [...answers, ...probes].filter(
        (answer) => answer.startedAt >= disruptStarted && answer.startedAt <= restored,
      );
      const down = answers.filter((answer) => answer.startedAt >= disrupted && answer.endedAt <= restoreStarted);
      const slowest = Math.max(...outage.map((answer) => answer.endedAt - answer.startedAt));
      console.log(
        `${_name}: ${answers.length} creates, ${answered200()} answered 200, ${down.length} while down; ` +
          `disrupting took ${Math.round(disrupted - disruptStarted)} ms, restoring ${Math.round(restored - restoreStarted)} ms; ` +
          `first 200 ${recoveredAt === undefined ? 'never' : `${Math.round(recoveredAt - restored)} ms`} after restore; slowest answer during the outage ${Math.round(slowest)} ms`,
      );
      // Every answer was a 200 or a proper 503 (none hung: the client waits 5 s; none 500), and
      // during the outage each came within 2 s.
      const wrong = answers.filter((answer) => answer.status !== 200 && !isUnavailableAnswer(answer));
      expect(wrong.map(describeAnswer), loggedFailures(service)).toEqual([]);
      expect(outage.filter((answer) => !isPrompt(answer)).map(describeAnswer)).toEqual([]);
      // While the database was out, every create answered 503 (none 200, none hanging).
      expect(down.length).toBeGreaterThanOrEqual(WRITERS);
      expect(down.filter((answer) => !isUnavailableAnswer(answer)).map(describeAnswer)).toEqual([]);
      // Readiness said so, liveness did not, and the process stayed up.
      // (A readiness answer is kept READINESS_MAX_AGE_MS: one given just before may still be told.)
      const readyz = probes.filter(
        (probe) => probe.path === '/readyz' && probe.startedAt >= disrupted + READINESS_MAX_AGE_MS,
      );
      expect(readyz.length).toBeGreaterThan(0);
      expect(readyz.filter((probe) => !isUnavailableAnswer(probe)).map(describeAnswer)).toEqual([]);
      expect(probes.filter((probe) => probe.path === '/healthz' && probe.status !== 200).map(describeAnswer)).toEqual(
        [],
      );
      expect(service.alive()).toBe(true);
      // Service resumed by itself: creates succeed again, and everything begun a moment later did.
      expect(recoveredAt).toBeDefined();
      const settled = (recoveredAt ?? 0) + 500;
      expect(
        answers.filter((answer) => answer.startedAt >= settled && answer.status !== 200).map(describeAnswer),
      ).toEqual([]);
      expect(after.status).toBe(200);

      // Nothing acknowledged was lost; and the creates that got a 503 are safe to retry.
      const check = await openDatabase({ url: db.url, dataDir: scratch ?? '' });
      try {
        const acknowledged = answers.flatMap((answer) =>
          answer.status === 200 && answer.id !== undefined ? [answer.id] : [],
        );
        const missing: bigint[] = [];
        for (let i = 0; i < acknowledged.length; i += 32) {
          const chunk = acknowledged.slice(i, i + 32);
          const found = await Promise.all(chunk.map((id) => check.findPlant(id)));
          missing.push(...chunk.filter((id, k) => found[k]?.plant.name !== `p${id}`));
        }
        expect(missing).toEqual([]);
      } finally {
        await check.close();
      }
      const refused = answers.filter((answer) => answer.status === 503).slice(0, 100);
      const retried = await Promise.all(refused.map((answer) => send(url, '/plants', token, answer.id)));
      expect(retried.filter((answer) => answer.status !== 200).map(describeAnswer)).toEqual([]);
    },
  );

  it('does not start while the database is down: exits 1 at once with a message naming the cause', async () => {
    if (!postgres || !scratch) throw new Error('set-up failed');
    await postgres.stop('fast');
    try {
      const startedAt = performance.now();
      const starting = startServiceProcess({ DATABASE_URL: postgres.url, DATA_DIR: scratch, NODE_ENV: 'production' });
      await expect(starting).rejects.toThrow(/code 1\)[\s\S]*migrations[\s\S]*could not connect/);
      expect(performance.now() - startedAt).toBeLessThan(10_000);
    } finally {
      await postgres.start();
    }
  });
});
