import { createServer } from 'node:net';
import { openDatabase } from '@plant-store/db';
import { createTestStorage, testEngines, testToken } from '@plant-store/db/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { failOnContractViolations } from './test-support/checked-fetch.js';
import { pinnedNodeVersion } from './test-support/pinned-runtime.js';
import { serviceLifecycle } from './test-support/service-lifecycle.js';
import { collect, spawnApi, startServiceProcess, storageEnv } from './test-support/service-process.js';
import { request } from './test-support/test-service.js';
import { waitUntil } from './test-support/wait-until.js';

failOnContractViolations();

// The built entrypoint (`dist/index.js` on the pinned runtime) as a process of its own: signals,
// a crash, the migrate step and the token command. A file of its own beside server.test.ts: both
// spend most of their time waiting on processes, and run side by side.
describe.each(testEngines())('the service as a process on %s', (engine) => {
  const { storage, start } = serviceLifecycle(engine);

  it('runs as a process on the pinned runtime: starts, serves, and exits 0 on SIGTERM', async () => {
    const where = await storage();
    const { child, url, output, exited } = await startServiceProcess(storageEnv(where));
    expect((await request(url, '/healthz')).status).toBe(200);
    // The listening line names the runtime the process really runs on.
    expect(output()).toContain(`"node":"${await pinnedNodeVersion()}"`);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output()).toContain('"message":"stopped"');
  });

  // These three start the service (or the entrypoint) several times on a fresh database: past 60 s
  // on a busy machine.
  it('keeps every plant answered 200 when the process is killed with SIGKILL mid-stream', async () => {
    const where = await storage();
    let token: string | undefined;
    if (engine === 'postgres') {
      const db = await openDatabase({ url: where.databaseUrl, dataDir: where.dataDir });
      token = (await db.issueToken(testToken({ name: 'crash', scopes: ['plants:write'] }))).token;
      await db.close();
    }
    const { child, url, exited } = await startServiceProcess(storageEnv(where), (output) => {
      token ??= /PLANT_STORE_TOKEN=(pst_\S+)/.exec(output)?.[1];
      return token !== undefined;
    });

    const answered: bigint[] = [];
    let next = 1n;
    const writer = async () => {
      for (;;) {
        const id = next++;
        try {
          const response = await request(url, '/plants', {
            body: `{"id": ${id}, "name": "p${id}"}`,
            token: token ?? '',
          });
          if (response.status === 200) answered.push(id);
        } catch {
          return; // the process is gone
        }
      }
    };
    const writers = Array.from({ length: 8 }, writer);
    // Killed mid-stream: once a good number were answered, with more in flight.
    await waitUntil(() => answered.length > 10, 60_000);
    child.kill('SIGKILL');
    await Promise.all(writers);
    await exited;
    expect(answered.length).toBeGreaterThan(10);

    const restarted = await start(where);
    for (const id of answered) expect((await restarted.db.findPlant(id))?.plant).toEqual({ id, name: `p${id}` });
  }, 180_000);

  it('runs migrations as a step of their own: serve refuses a database behind, migrate applies, serve starts', async () => {
    const where = await storage(false);
    const env = { ...storageEnv(where), MIGRATE_ON_START: 'false', PORT: '0' };
    const behind = await collect(spawnApi(['serve'], env));
    expect(behind.code).toBe(1);
    expect(behind.stderr).toMatch(/the database schema is not up to date: \d+ migrations are not applied/);
    expect(behind.stderr).toContain('apply them with `plant-store migrate`');

    const migrated = await collect(spawnApi(['migrate'], env));
    expect(migrated.code).toBe(0);
    expect(migrated.stderr).toContain('"message":"applied migrations"');
    const again = await collect(spawnApi(['migrate'], env));
    expect(again.stderr).toContain('"message":"database is up to date"');

    const { child, url, exited } = await startServiceProcess(env);
    expect((await request(url, '/readyz')).status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 180_000);

  it('manages tokens with the token command: create prints the token last, list, revoke', async () => {
    const where = await storage();
    const env = storageEnv(where);
    const created = await collect(spawnApi(['token', 'create', '--name', 'ci-bot', '--scope', 'plants:write'], env));
    expect(created.code).toBe(0);
    const lines = created.stdout.trimEnd().split('\n');
    const token = lines.at(-1) ?? '';
    expect(token).toMatch(/^pst_[A-Za-z0-9_-]{43}$/);

    const duplicate = await collect(spawnApi(['token', 'create', '--name', 'ci-bot'], env));
    expect(duplicate.code).toBe(2);
    expect(duplicate.stderr).toContain('already exists');

    const listed = await collect(spawnApi(['token', 'list'], env));
    expect(listed.stdout).toMatch(
      /^ci-bot\tteam default\tplants:write\tcreated \S+\texpires never\tlast used never\tlimit default\tactive$/m,
    );
    expect(listed.stdout).not.toContain(token);

    const service = await start(where);
    const body = '{"id": 5, "name": "Bot plant"}';
    expect((await request(service.url, '/plants', { body, token })).status).toBe(200);
    await service.close();

    const revoked = await collect(spawnApi(['token', 'revoke', 'ci-bot'], env));
    expect(revoked.code).toBe(0);
    const again = await start(where);
    expect((await request(again.url, '/plants', { body, token })).status).toBe(401);
    await again.close();

    const bad = await collect(spawnApi(['token', 'create', '--name', 'x', '--scope', 'plants:admin'], env));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown scope');
  }, 180_000);
});

describe('the plant-store entrypoint', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A port held by another program (a plain listening socket) until the test ends. */
  async function takenPort(): Promise<number> {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => holder.close(() => resolve())));
    const address = holder.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    return address.port;
  }

  async function embeddedStorageEnv(): Promise<Record<string, string>> {
    const storage = await createTestStorage('pglite', { migrated: true });
    cleanups.push(() => storage.dispose());
    return storageEnv(storage);
  }

  /** The error-level log lines a process wrote on stderr. */
  function errorLines(stderr: string): string[] {
    return stderr.split('\n').filter((line) => line.includes('"level":"error"'));
  }

  it('fails on a port in use with one line naming PORT (or METRICS_PORT), no stack', async () => {
    const env = await embeddedStorageEnv();
    const port = await takenPort();
    const onApiPort = await collect(spawnApi([], { ...env, HOST: '127.0.0.1', PORT: String(port) }));
    expect(onApiPort.code).toBe(1);
    const [line, ...more] = errorLines(onApiPort.stderr);
    expect(more).toEqual([]);
    expect(line).toContain(
      `port ${port} on 127.0.0.1 is already in use (another Plant Store, or another program): stop that, or choose another port with PORT, e.g. PORT=${port + 1}`,
    );
    expect(onApiPort.stderr).not.toContain('"stack"');

    const onMetricsPort = await collect(
      spawnApi([], { ...env, HOST: '127.0.0.1', PORT: '0', METRICS_PORT: String(port) }),
    );
    expect(onMetricsPort.code).toBe(1);
    const [metricsLine, ...moreMetrics] = errorLines(onMetricsPort.stderr);
    expect(moreMetrics).toEqual([]);
    expect(metricsLine).toContain(`choose another port with METRICS_PORT, e.g. METRICS_PORT=${port + 1}`);
    expect(onMetricsPort.stderr).not.toContain('"stack"');
  });

  it('says what to do when the token command meets the running service on the embedded database', async () => {
    const env = await embeddedStorageEnv();
    const service = await startServiceProcess(env);
    cleanups.push(() => service.kill());
    const listed = await collect(spawnApi(['token', 'list'], env));
    expect(listed.code).toBe(2);
    expect(listed.stdout).toBe('');
    expect(listed.stderr.trimEnd().split('\n')).toEqual([
      `plant-store token: the embedded database in ${env.DATA_DIR} is open in a running Plant Store service (one process at a time): ` +
        'stop the service (Ctrl+C where it runs), run this command again, then start the service again; ' +
        'or, while it runs, manage tokens over HTTP with a tokens:manage token (POST /tokens, GET /tokens, ' +
        'DELETE /tokens/NAME: see docs/tokens.md)',
    ]);
    // Once the service has stopped, the same command works.
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect((await collect(spawnApi(['token', 'list'], env))).code).toBe(0);
  });

  it('refuses to start in production without DATABASE_URL, saying how to allow the embedded database', async () => {
    const { code, stderr } = await collect(spawnApi([], { NODE_ENV: 'production', DATABASE_URL: '' }));
    expect(code).toBe(1);
    expect(stderr).toContain('NODE_ENV=production needs DATABASE_URL');
    expect(stderr).toContain('set ALLOW_EMBEDDED_DATABASE=true');
  });

  it('lists its commands, and refuses an unknown one with exit code 2', async () => {
    const help = await collect(spawnApi(['--help'], {}));
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('serve                      run the service (the default)');
    expect(help.stdout).toContain('migrate                    apply pending database migrations, then exit');
    const unknown = await collect(spawnApi(['seve'], {}));
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('plant-store: unknown command "seve"');
  });
});
