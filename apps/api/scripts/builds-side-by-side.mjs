/**
 * Two builds of the service side by side, each on its own database migrated by its own build, on
 * both engines, in one run: requests/s and CPU per request of creates (`POST /plants`, a new id
 * each), reads by id (`GET /plants/{id}`) and pages (`GET /plants?limit=20` after a random plant,
 * half of them with a tag), at c=64. Written to set a build of the commit before a change (for
 * the event feed: the commit just before it, in a worktree) against the one built here, where
 * cpu-side-by-side.mjs sets copies of this package's `dist` against each other on one database.
 *
 * Each build is started as `serve` from its own apps/api (its `dist/index.js` as a program, as
 * the bench starts it: production settings, access lines and metrics on) on PostgreSQL (the
 * throwaway databases `bench_before` and `bench_after` on 127.0.0.1:5432, created, migrated with
 * that build's `migrate`, and dropped at the end unless `--keep`) or on the embedded database (a
 * data folder each under /tmp/builds-side-by-side). Each gets the bench's read set (10,000
 * plants, ten tags) through its own API before anything is measured. Then, scenario by scenario,
 * round after round, each build is warmed up and loaded with autocannon in turn, the order
 * alternating, so that both share the machine's swings: the ratio of a round's two rates is fair
 * even when other work keeps the machine busy, the rates themselves are not. CPU is utime + stime
 * from /proc/PID/stat over the measured window. A bare node:http server (bench/ceilings/
 * http-ceiling.ts) is measured beside them once a scenario, for the machine's state in the run.
 * It prints the processor, that server's rate and a table (medians over the rounds; after/before
 * is the median of the paired rounds' ratios, with their range) on stdout, each round on stderr.
 *
 * The bench's own modules (TypeScript) do the starting, the token, the read set and the load, so
 * run it with tsx:
 *
 *   git worktree add --detach /work/prefeed <commit> && (cd /work/prefeed && pnpm install && pnpm build)
 *   cd apps/api && npx --yes pnpm@10.34.9 exec node --import tsx scripts/builds-side-by-side.mjs \
 *     --before /work/prefeed/apps/api [--after .] [--engines pg,pglite] [--rounds 5] [--seconds 5]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  benchPlant,
  createIdSequence,
  pagePath,
  plantJson,
  randomPageQuery,
  randomReadId,
} from '../bench/bench-plants.ts';
import { startHttpCeiling } from '../bench/ceiling-process.ts';
import { processCpuSeconds } from '../bench/cpu-usage.ts';
import { measureHttp } from '../bench/http-load.ts';
import { createReadSet } from '../bench/read-set.ts';
import { issueToken, productionEnv, startService } from '../bench/service-process.ts';

const API = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
const WORK = '/tmp/builds-side-by-side';
const { values: o } = parseArgs({
  options: {
    before: { type: 'string' },
    after: { type: 'string', default: API },
    engines: { type: 'string', default: 'pg,pglite' },
    scenarios: { type: 'string', default: 'read,page,create' },
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '1' },
    c: { type: 'string', default: '64' },
    keep: { type: 'boolean', default: false },
  },
});
if (o.before === undefined) throw new Error('--before: the apps/api folder of the build before (built)');
const builds = [
  { name: 'before', root: resolve(o.before) },
  { name: 'after', root: resolve(o.after) },
];
const [rounds, seconds, warmup, c] = [o.rounds, o.seconds, o.warmup, o.c].map(Number);
const log = (s) => process.stderr.write(`${s}\n`);
const psql = (sql) => execFileSync('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-qc', sql], { stdio: 'ignore' });
const childEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
const limits = { AUTH_FAILURE_LIMIT: '1000000/1' };

function requestsFor(scenario) {
  switch (scenario) {
    case 'create': {
      const nextId = createIdSequence();
      return () => ({ method: 'POST', path: '/plants', body: plantJson(benchPlant(nextId())) });
    }
    case 'read':
      return () => ({ method: 'GET', path: `/plants/${randomReadId()}` });
    case 'page':
      return () => ({ method: 'GET', path: pagePath(randomPageQuery()) });
    case 'hello':
      return () => ({ method: 'GET', path: '/' });
  }
  throw new Error(`unknown scenario ${scenario}`);
}
/** One window on `target` after a warm-up: requests/s and CPU us per request of its process. */
async function measure(target, nextRequest) {
  const load = { url: target.url, token: target.token, nextRequest, expectedStatus: 200 };
  await measureHttp(load, c, { seconds: warmup });
  const cpu0 = await processCpuSeconds(target.pid);
  const m = await measureHttp(load, c, { seconds });
  const cpu = (await processCpuSeconds(target.pid)) - cpu0;
  return { rate: m.perSecond, us: (cpu * 1_000_000) / m.completed, bad: m.unexpected + m.errors };
}

async function startBuild(engine, build) {
  const storage =
    engine === 'pg'
      ? { DATABASE_URL: `postgres://postgres@127.0.0.1:5432/bench_${build.name}` }
      : { DATA_DIR: `${WORK}/data-${build.name}` };
  if (engine === 'pg') {
    psql(`DROP DATABASE IF EXISTS bench_${build.name}`);
    psql(`CREATE DATABASE bench_${build.name}`);
  } else {
    rmSync(storage.DATA_DIR, { recursive: true, force: true });
    mkdirSync(storage.DATA_DIR, { recursive: true });
  }
  const env = productionEnv(childEnv, storage, limits);
  execFileSync(process.execPath, [`${build.root}/dist/index.js`, 'migrate'], { cwd: build.root, env, stdio: 'ignore' });
  const token = await issueToken(build.root, env, {
    name: `side-by-side-${build.name}`,
    scopes: ['plants:read', 'plants:write'],
  });
  const service = await startService(build.root, env, `${WORK}/${build.name}-${engine}.log`);
  log(`${engine} ${build.name}: ${build.root} at ${service.url}, seeding`);
  await createReadSet(service.url, token);
  return { ...service, token, build: build.name };
}

mkdirSync(WORK, { recursive: true });
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const model = (() => {
  try {
    return execFileSync('lscpu', { encoding: 'utf8' }).match(/Model name:\s*(.*)/)?.[1] ?? cpus()[0]?.model;
  } catch {
    return cpus()[0]?.model;
  }
})();
const load0 = loadavg();
const hello = await startHttpCeiling({ apiRoot: API, env: childEnv, logFile: `${WORK}/hello.log` });
const helloRuns = [];
const rows = [];
try {
  for (const engine of o.engines.split(',')) {
    const svcs = [];
    try {
      for (const build of builds) svcs.push(await startBuild(engine, build));
      for (const scenario of o.scenarios.split(',')) {
        const h = await measure({ ...hello, token: undefined }, requestsFor('hello'));
        helloRuns.push(h);
        log(`hello: ${Math.round(h.rate)}/s ${h.us.toFixed(1)} us/req`);
        // Each build its own id sequence: every create a new plant in its own database.
        const next = svcs.map(() => requestsFor(scenario));
        const by = svcs.map(() => []);
        for (let r = 0; r < rounds; r++) {
          const order = r % 2 === 0 ? [0, 1] : [1, 0];
          for (const i of order) {
            const m = await measure(svcs[i], next[i]);
            by[i].push(m);
            log(
              `${engine} ${scenario} r${r} ${svcs[i].build}: ${Math.round(m.rate)}/s ${m.us.toFixed(1)} us/req${m.bad ? ` (${m.bad} unexpected)` : ''}`,
            );
          }
        }
        rows.push({ engine, scenario, by });
      }
    } finally {
      await Promise.all(svcs.map((s) => s.stop()));
      if (engine === 'pg' && !o.keep) for (const b of builds) psql(`DROP DATABASE IF EXISTS bench_${b.name}`);
    }
  }
} finally {
  await hello.stop();
  if (!o.keep) for (const b of builds) rmSync(`${WORK}/data-${b.name}`, { recursive: true, force: true });
}

const names = { create: 'POST /plants (new id)', read: 'GET /plants/{id}', page: 'GET /plants?limit=20' };
const fmt = (n) => Math.round(n).toLocaleString('en-US');
const loadEnd = loadavg();
console.log(
  `processor: ${model} (${cpus().length} CPUs); load average ${load0[0].toFixed(1)} at the start, ${loadEnd[0].toFixed(1)} at the end`,
);
console.log(
  `bare node:http hello world: ${fmt(median(helloRuns.map((h) => h.rate)))}/s median (${fmt(Math.min(...helloRuns.map((h) => h.rate)))}-${fmt(Math.max(...helloRuns.map((h) => h.rate)))}), ${median(helloRuns.map((h) => h.us)).toFixed(0)} us/req`,
);
console.log(
  `c=${c}, ${rounds} rounds of ${seconds} s per build and scenario after ${warmup} s of warm-up, order alternating`,
);
console.log(`before: ${builds[0].root}\nafter: ${builds[1].root}\n`);
console.log(
  '| engine | scenario | before req/s | after req/s | after/before (paired rounds) | before CPU us/req | after CPU us/req |',
);
console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: |');
for (const { engine, scenario, by } of rows) {
  const ratios = by[1].map((m, i) => m.rate / by[0][i].rate);
  const bad = by.flat().reduce((n, m) => n + m.bad, 0);
  console.log(
    `| ${engine === 'pg' ? 'PostgreSQL' : 'PGlite'} | ${names[scenario]} | ${fmt(median(by[0].map((m) => m.rate)))} | ${fmt(median(by[1].map((m) => m.rate)))} | ${median(ratios).toFixed(2)}x (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}) | ${median(by[0].map((m) => m.us)).toFixed(0)} | ${median(by[1].map((m) => m.us)).toFixed(0)} |${bad ? ` ${bad} unexpected answers` : ''}`,
  );
}
