/**
 * `pnpm image:test`: proves the built image (`pnpm image:build`) against a fresh PostgreSQL
 * database on this machine, over host networking, as a platform would run it:
 *   1. `migrate` as a one-off container; a second run finds nothing to do;
 *   2. `token create` with the image's own CLI: the token alone on its last stdout line;
 *   3. the service container with MIGRATE_ON_START=false: not root, /readyz ready, HEALTHCHECK
 *      healthy; then create, read, list and delete plants over HTTP, ids exact;
 *   4. SIGTERM: it stops promptly and exits 0.
 * Prints each step and fails (exit 1) on the first that does not hold, with the container's log.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { createThrowawayDatabase, type ThrowawayDatabase } from '@plant-store/db/testing';
import { type ContainerEngine, findContainerEngine, ImageToolError, runChecked } from './container-engine.js';
import { IMAGE_NAME } from './workspace-pins.js';

const IMAGE = `${IMAGE_NAME}:latest`;
/** Where the throwaway database is created: the tests' server, as CI sets it. */
const SERVER_URL =
  process.env.IMAGE_TEST_DATABASE_URL || process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
/** The longest a SIGTERM may take to stop the container: "promptly" (its drain is 10 s at most). */
const STOP_WITHIN_MS = 10_000;
/** The biggest int64: the image must keep ids exact too. */
const PLANT_ID = 9223372036854775807n;

interface Check {
  readonly step: string;
  readonly detail: string;
}

const checks: Check[] = [];
function pass(step: string, detail: string): void {
  checks.push({ step, detail });
  process.stdout.write(`ok   ${step}: ${detail}\n`);
}

function fail(step: string, detail: string): never {
  throw new ImageToolError(`${step}: ${detail}`);
}

async function main(): Promise<void> {
  const engine = await findContainerEngine();
  if ((await engine.run(['image', 'inspect', IMAGE])).code !== 0) {
    throw new ImageToolError(`${IMAGE} is not in ${engine.name}'s image store: run pnpm image:build first`);
  }
  const user = await runChecked(engine, ['image', 'inspect', '--format', '{{.Config.User}}', IMAGE]);
  if (user === '' || user.startsWith('0') || user.startsWith('root')) fail('image user', `runs as "${user}"`);
  pass('image user', `${user} (not root)`);

  const database = await createThrowawayDatabase(SERVER_URL, {
    prefix: 'plant_store_image',
    hint: 'TEST_DATABASE_URL',
  });
  const containerName = `plant-store-image-test-${randomBytes(4).toString('hex')}`;
  try {
    await runSteps(engine, database, containerName);
  } finally {
    await engine.run(['rm', '--force', containerName]);
    await database.drop();
  }
  process.stdout.write(`\nimage:test passed: ${checks.length} checks on ${IMAGE} with ${engine.name}\n`);
}

async function runSteps(engine: ContainerEngine, database: ThrowawayDatabase, name: string): Promise<void> {
  const env = ['--env', `DATABASE_URL=${database.url}`, '--env', 'MIGRATE_ON_START=false'];
  const oneOff = (...args: string[]) => engine.run(['run', '--rm', '--network', 'host', ...env, IMAGE, ...args]);

  const migrated = await oneOff('migrate');
  if (migrated.code !== 0 || !migrated.stderr.includes('"message":"applied migrations"')) {
    fail('migrate', `exit ${migrated.code}: ${migrated.stderr}`);
  }
  const again = await oneOff('migrate');
  if (again.code !== 0 || !again.stderr.includes('"message":"database is up to date"')) {
    fail('migrate again', `exit ${again.code}: ${again.stderr}`);
  }
  pass('migrate', `a one-off container applied the migrations to ${database.name}; a second found nothing to do`);

  const issued = await oneOff(
    'token',
    'create',
    '--name',
    'image-test',
    '--scope',
    'plants:read',
    '--scope',
    'plants:write',
  );
  const token = issued.stdout.trimEnd().split('\n').at(-1) ?? '';
  if (issued.code !== 0 || !/^pst_[A-Za-z0-9_-]{43}$/.test(token)) {
    fail('token create', `exit ${issued.code}, last stdout line "${token}": ${issued.stderr}`);
  }
  pass('token create', 'the image issued a token, alone on its last stdout line');

  // A port free on the host network (the HEALTHCHECK reads PORT, so it cannot be 0 here).
  const port = await findFreePort();
  await runChecked(engine, [
    'run',
    '--detach',
    '--name',
    name,
    '--network',
    'host',
    ...env,
    '--env',
    `PORT=${port}`,
    IMAGE,
  ]);
  const url = await waitForListening(engine, name);
  const ready = await fetch(`${url}/readyz`);
  if (ready.status !== 200) fail('readyz', `answered ${ready.status}`);
  pass('serve', `listening at ${url} (HOST 0.0.0.0 inside), /readyz 200`);

  const health = await engine.run(['healthcheck', 'run', name]);
  // Docker has no `healthcheck run`; its daemon runs the HEALTHCHECK itself, shown by inspect.
  if (engine.name === 'podman' && health.code !== 0) fail('healthcheck', `${health.stdout}${health.stderr}`);
  pass('healthcheck', engine.name === 'podman' ? 'the image HEALTHCHECK reports healthy' : 'declared');

  await checkPlants(url, token);
  await checkDocs(url);

  const stopping = Date.now();
  await runChecked(engine, ['stop', '--time', String(STOP_WITHIN_MS / 1000 + 20), name], { timeoutMs: 60_000 });
  const stoppedMs = Date.now() - stopping;
  const exitCode = await runChecked(engine, ['inspect', '--format', '{{.State.ExitCode}}', name]);
  const logs = await engine.run(['logs', name]);
  if (exitCode !== '0') fail('SIGTERM', `exit code ${exitCode}: ${logs.stderr}`);
  if (stoppedMs > STOP_WITHIN_MS) fail('SIGTERM', `took ${stoppedMs} ms`);
  if (!logs.stderr.includes('"message":"stopped"')) fail('SIGTERM', `no "stopped" log line: ${logs.stderr}`);
  pass('SIGTERM', `exited 0 after ${stoppedMs} ms, having logged "stopped"`);
}

/** A TCP port nobody listens on right now (the kernel's choice for port 0). */
function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** The service's URL from its `listening` log line, once it is written. */
async function waitForListening(engine: ContainerEngine, name: string): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const logs = await engine.run(['logs', name]);
    const line = logs.stderr.split('\n').find((entry) => entry.includes('"message":"listening"'));
    if (line !== undefined) {
      const listening = JSON.parse(line) as { url?: unknown };
      if (typeof listening.url !== 'string') fail('serve', `listening line without a url: ${line}`);
      // The container listens on every address; this test talks to it on loopback.
      return listening.url.replace('0.0.0.0', '127.0.0.1');
    }
    const running = await engine.run(['inspect', '--format', '{{.State.Running}}', name]);
    if (running.stdout.trim() !== 'true') fail('serve', `the container stopped: ${logs.stderr}`);
    if (Date.now() > deadline) fail('serve', `no listening line within 60 s: ${logs.stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Create, fetch, list and delete a plant over HTTP: what the service is for. */
async function checkPlants(url: string, token: string): Promise<void> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const body = `{"id":${PLANT_ID},"name":"Monstera","tag":"aroid"}`;
  const created = await fetch(`${url}/plants`, { method: 'POST', headers, body });
  const createdText = await created.text();
  if (created.status !== 200 || createdText !== body) fail('create', `${created.status} ${createdText}`);
  const fetched = await fetch(`${url}/plants/${PLANT_ID}`, { headers });
  const fetchedText = await fetched.text();
  if (fetched.status !== 200 || fetchedText !== body) fail('read', `${fetched.status} ${fetchedText}`);
  const listed = await fetch(`${url}/plants?tag=aroid`, { headers });
  const listedText = await listed.text();
  if (listed.status !== 200 || listedText !== `[${body}]`) fail('list', `${listed.status} ${listedText}`);
  const deleted = await fetch(`${url}/plants/${PLANT_ID}`, { method: 'DELETE', headers });
  const gone = await fetch(`${url}/plants/${PLANT_ID}`, { headers });
  await gone.text();
  if (deleted.status !== 204 || gone.status !== 404) fail('delete', `${deleted.status}, then GET ${gone.status}`);
  pass('plants', `created, read, listed and deleted plant ${PLANT_ID} (exact), then 404`);
}

/** The docs page and the Swagger UI files it loads, served from what the image kept of swagger-ui-dist. */
async function checkDocs(url: string): Promise<void> {
  for (const path of ['/docs', '/openapi.json', ...DOCS_ASSETS.map((file) => `/docs/assets/${file}`)]) {
    const response = await fetch(`${url}${path}`);
    const bytes = (await response.arrayBuffer()).byteLength;
    if (response.status !== 200 || bytes === 0) fail('docs', `${path} answered ${response.status} (${bytes} bytes)`);
  }
  pass('docs', `/docs, /openapi.json and the ${DOCS_ASSETS.length} files of the page answered`);
}

/** What /docs/assets/ serves (apps/api/src/routes/docs.ts). */
const DOCS_ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js', 'index.css', 'favicon-32x32.png', 'init-swagger-ui.js'];

main().catch((error: unknown) => {
  process.stderr.write(`image:test FAILED: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
