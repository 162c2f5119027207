/**
 * CPU per request of builds of the service side by side: each build (a copy of `dist`, e.g.
 * `cp -r dist dist-before` before a change) started as `serve` with production settings (access
 * lines and metrics on) on PostgreSQL (a throwaway database `cut400_ab` on 127.0.0.1:5432) or on
 * the embedded database, and loaded with autocannon in turn, round after round (the order
 * alternating), so that both share the machine's swings. CPU is utime + stime from
 * /proc/PID/stat over the requests answered. Scenarios: `invalid` (POST /plants, an empty name:
 * 400), `unauth` (GET /plants?limit=20 with an unknown token: 401), `page` and `page-tag` (a page
 * of 20 after a random plant of a 10,000-plant read set, with a tag or not), `feed` (a page of 100
 * events from a random place of the first 9,000). A build named `fastify` is the bench's Fastify
 * reference (bench/ceilings/fastify-reference.ts) on the same database; `koa`, the bench's minimal
 * Koa reference (bench/ceilings/koa-reference.ts: no authentication, PostgreSQL only). Failed-authentication
 * limits are set high (AUTH_FAILURE_LIMIT=1000000/1) so that the 401 path stays a 401, counted.
 * `--prof DIR` runs the builds with --cpu-prof; `--gc` with --trace-gc (in /tmp/cut400/BUILD-ENGINE.log;
 * each build's stderr, its access lines, in BUILD-ENGINE.err).
 *
 *   cd apps/api && npx --yes pnpm@10.34.9 exec node scripts/cpu-side-by-side.mjs --engine pg --builds dist-before,dist
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const API = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
const require = createRequire(`${API}/package.json`);
const autocannon = require('autocannon');
// The node running this script (the project's Node 24 under pnpm exec) runs the builds too.
const NODE = process.execPath;
const WORK = '/tmp/cut400';
mkdirSync(WORK, { recursive: true });
const { values: o } = parseArgs({
  options: {
    engine: { type: 'string', default: 'pg' },
    builds: { type: 'string', default: 'dist-before,dist' },
    scenarios: { type: 'string', default: 'invalid,unauth,page,page-tag' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '6' },
    prof: { type: 'string' },
    c: { type: 'string', default: '64' },
    keep: { type: 'boolean', default: false },
    gc: { type: 'boolean', default: false },
  },
});
const builds = o.builds.split(',');
const DB = 'cut400_ab';
const log = (s) => process.stderr.write(`${s}\n`);
const baseEnv = {
  PATH: process.env.PATH,
  NODE_ENV: 'production',
  METRICS_ON_API_PORT: 'true',
  ALLOW_EMBEDDED_DATABASE: 'true',
  SHUTDOWN_TIMEOUT_MS: '5000',
  AUTH_FAILURE_LIMIT: '1000000/1',
  HOST: '127.0.0.1',
};
function envFor(i) {
  const dataDir = `${WORK}/data-${o.engine}-${i}`;
  mkdirSync(dataDir, { recursive: true });
  return o.engine === 'pg'
    ? { ...baseEnv, DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${DB}`, DATA_DIR: dataDir }
    : { ...baseEnv, DATA_DIR: dataDir };
}
if (o.engine === 'pg') {
  try {
    execFileSync('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-c', `CREATE DATABASE ${DB}`], { stdio: 'ignore' });
  } catch {}
}
const tokens = [];
for (const [i, b] of builds.entries()) {
  if (o.engine === 'pg' && i > 0) {
    tokens.push(tokens[0]);
    continue;
  }
  const out = execFileSync(
    NODE,
    [
      `${API}/${b === 'fastify' || b === 'koa' ? 'dist' : b}/index.js`,
      'token',
      'create',
      '--name',
      `ab-${Date.now()}-${i}`,
      '--scope',
      'plants:read',
      '--scope',
      'plants:write',
      '--rate-limit',
      '1000000/1',
    ],
    { cwd: API, env: envFor(i) },
  ).toString();
  tokens.push(out.trim().split('\n').at(-1).trim());
}
/** A reference of the bench as a build: `fastify` (ceilings/fastify-reference.ts) or `koa` (ceilings/koa-reference.ts). */
async function startReference(i, b) {
  const flags = o.prof ? ['--cpu-prof', `--cpu-prof-dir=${o.prof}/${b}`] : [];
  const url = `postgres://postgres@127.0.0.1:5432/${DB}`;
  const args =
    b === 'koa'
      ? ['--url', url]
      : o.engine === 'pg'
        ? ['--engine', 'postgres', '--url', url]
        : ['--engine', 'pglite', '--data-dir', envFor(i).DATA_DIR];
  const script = b === 'koa' ? 'koa-reference.ts' : 'fastify-reference.ts';
  const child = spawn(NODE, [...flags, '--import', 'tsx', `${API}/bench/ceilings/${script}`, ...args], {
    cwd: API,
    env: { ...baseEnv, REFERENCE_TOKEN: tokens[i] },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const port = await new Promise((resolve, reject) => {
    child.on('message', (m) => m?.type === 'ready' && resolve(m.port));
    child.on('exit', () => reject(new Error(`${b} exited`)));
  });
  return { b, url: `http://127.0.0.1:${port}`, child, token: tokens[i] };
}
async function start(i, b) {
  if (b === 'fastify' || b === 'koa') return startReference(i, b);
  // Below the kernel's ephemeral range (32768-60999): no outgoing connection can hold the port.
  const port = 21000 + i + (o.engine === 'pg' ? 0 : 10);
  const flags = ['--max-semi-space-size=16', '--max-old-space-size=192'];
  if (o.prof) flags.push('--cpu-prof', `--cpu-prof-dir=${o.prof}/${b}`);
  if (o.gc) flags.push('--trace-gc');
  const out = openSync(`${WORK}/${b}-${o.engine}.log`, 'w');
  const child = spawn(NODE, [...flags, `${API}/${b}/index.js`, 'serve'], {
    cwd: API,
    env: { ...envFor(i), PORT: String(port) },
    stdio: ['ignore', out, openSync(`${WORK}/${b}-${o.engine}.err`, 'w')],
  });
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    try {
      const r = await fetch(`${url}/readyz`);
      await r.arrayBuffer();
      if (r.status === 200) break;
    } catch {}
    if (child.exitCode !== null) throw new Error(`${b} exited`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { b, url, child, token: tokens[i] };
}
const svcs = [];
for (const [i, b] of builds.entries()) svcs.push(await start(i, b));
const BASE = 1n << 61n;
async function seed(s) {
  const r = await fetch(`${s.url}/plants?limit=1&after=${BASE}`, { headers: { authorization: `Bearer ${s.token}` } });
  const j = await r.text();
  if (j !== '[]') return;
  log(`seeding ${s.b}`);
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < 10000) {
        const k = next++;
        const res = await fetch(`${s.url}/plants`, {
          method: 'POST',
          headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
          body: `{"id":${BASE + BigInt(k)},"name":"Read plant ${k}","tag":"read-${k % 10}"}`,
        });
        await res.arrayBuffer();
      }
    }),
  );
}
for (const s of o.engine === 'pg' ? svcs.slice(0, 1) : svcs) await seed(s);
const rid = () => BASE + BigInt(Math.floor(Math.random() * 10000));
/** Cursors spread over the feed (every 100th event of the first 9,000), for the `feed` scenario. */
const cursors = [];
if (o.scenarios.includes('feed')) {
  const s = svcs[0];
  let after = '';
  while (cursors.length < 90) {
    const r = await fetch(`${s.url}/events?limit=100${after}`, { headers: { authorization: `Bearer ${s.token}` } });
    const page = await r.json();
    if (page.length < 100) break;
    cursors.push(page[0].cursor);
    after = `&after=${page.at(-1).cursor}`;
  }
  log(`${cursors.length} feed cursors`);
}
let idn = 1n;
const BAD = `pst_${'x'.repeat(43)}`;
function requestsFor(scn, s) {
  const auth = { authorization: `Bearer ${s.token}` };
  switch (scn) {
    case 'invalid':
      return {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        setup: (r) => {
          idn++;
          r.body = `{"id":${idn},"name":"","tag":"bench"}`;
          return r;
        },
        expect: 400,
      };
    case 'unauth':
      return {
        method: 'GET',
        headers: { authorization: `Bearer ${BAD}` },
        setup: (r) => {
          r.path = '/plants?limit=20';
          return r;
        },
        expect: 401,
      };
    case 'page':
      return {
        method: 'GET',
        headers: auth,
        setup: (r) => {
          r.path = `/plants?limit=20&after=${rid()}`;
          return r;
        },
        expect: 200,
      };
    case 'feed':
      return {
        method: 'GET',
        headers: auth,
        setup: (r) => {
          r.path = `/events?limit=100&after=${cursors[Math.floor(Math.random() * cursors.length)]}`;
          return r;
        },
        expect: 200,
      };
    case 'page-tag':
      return {
        method: 'GET',
        headers: auth,
        setup: (r) => {
          r.path = `/plants?limit=20&tag=read-${Math.floor(Math.random() * 10)}&after=${rid()}`;
          return r;
        },
        expect: 200,
      };
  }
}
function cpuTicks(pid) {
  const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
  return { user: Number(f[11]), system: Number(f[12]) };
}
function load(s, scn, seconds) {
  const q = requestsFor(scn, s);
  return new Promise((resolve, reject) =>
    autocannon(
      {
        url: s.url,
        connections: Number(o.c),
        duration: seconds,
        requests: [{ method: q.method, headers: q.headers, path: '/plants', setupRequest: q.setup }],
      },
      (err, res) => (err ? reject(err) : resolve({ res, expect: q.expect })),
    ),
  );
}
const results = {};
for (const scn of o.scenarios.split(',')) {
  for (let r = 0; r < Number(o.rounds); r++) {
    const order = r % 2 === 0 ? svcs : [...svcs].reverse();
    for (const s of order) {
      await load(s, scn, 1);
      const t0 = cpuTicks(s.child.pid);
      const { res, expect } = await load(s, scn, Number(o.seconds));
      const t1 = cpuTicks(s.child.pid);
      const codes = res.statusCodeStats ?? {};
      const good = codes[expect]?.count ?? 0;
      const us = ((t1.user + t1.system - t0.user - t0.system) * 10000) / res.requests.total;
      const sys = ((t1.system - t0.system) * 10000) / res.requests.total;
      results[scn] = results[scn] ?? {};
      results[scn][s.b] = results[scn][s.b] ?? [];
      results[scn][s.b].push({ us, rate: res.requests.average, total: res.requests.total, good });
      log(
        `${scn} r${r} ${s.b}: ${Math.round(res.requests.total / Number(o.seconds))}/s ${us.toFixed(1)} us/req (${sys.toFixed(1)} in the kernel), ${good}/${res.requests.total} ${expect} ${JSON.stringify(Object.keys(codes))}`,
      );
    }
  }
}
const med = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
console.log(`engine=${o.engine} c=${o.c} rounds=${o.rounds} seconds=${o.seconds}`);
console.log(`| scenario | ${builds.map((b) => `${b} us/req | ${b} req/s`).join(' | ')} |`);
for (const [scn, by] of Object.entries(results)) {
  console.log(
    `| ${scn} | ${builds.map((b) => `${med(by[b].map((x) => x.us)).toFixed(1)} | ${Math.round(med(by[b].map((x) => x.total)) / Number(o.seconds))}`).join(' | ')} |`,
  );
}
if (builds.length === 2)
  for (const [scn, by] of Object.entries(results)) {
    const ratios = by[builds[1]].map((x, i) => x.us / by[builds[0]][i].us);
    console.log(
      `${scn}: ${builds[1]}/${builds[0]} CPU per request, median of paired rounds: ${med(ratios).toFixed(3)} (${ratios.map((r) => r.toFixed(2)).join(' ')})`,
    );
  }
for (const s of svcs) s.child.kill('SIGTERM');
await Promise.all(svcs.map((s) => new Promise((r) => (s.child.exitCode !== null ? r() : s.child.once('exit', r)))));
if (!o.keep && o.engine !== 'pg')
  for (const i of builds.keys()) rmSync(`${WORK}/data-${o.engine}-${i}`, { recursive: true, force: true });
