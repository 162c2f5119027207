import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { DataDirLockedError, openDatabase } from '@plant-store/db';
import { createTestStorage, type TestStorage, testEngines } from '@plant-store/db/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { failOnContractViolations } from './test-support/checked-fetch.js';
import { pinnedNodeVersion } from './test-support/pinned-runtime.js';
import { spawnApi, startServiceProcess } from './test-support/service-process.js';
import { request, startTestService, type TestService } from './test-support/test-service.js';

failOnContractViolations();

async function collect(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  // 'close', not 'exit': the exit can be reported before the last of its output has been read.
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

function storageEnv(storage: TestStorage): Record<string, string> {
  return { DATA_DIR: storage.dataDir, ...(storage.databaseUrl ? { DATABASE_URL: storage.databaseUrl } : {}) };
}

describe.each(testEngines())('service lifecycle on %s', (engine) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** Migrated unless a test is about migrating (a copy of one migrated template: seconds faster). */
  async function storage(migrated = true): Promise<TestStorage> {
    const created = await createTestStorage(engine, { migrated });
    cleanups.push(() => created.dispose());
    return created;
  }

  async function start(on: TestStorage): Promise<TestService> {
    const service = await startTestService(on);
    cleanups.push(() => service.close());
    return service;
  }

  it('keeps committed plants across a restart on the same storage', async () => {
    const where = await storage();
    const first = await start(where);
    const { token } = await first.db.issueToken({ name: 'restart', scopes: ['plants:write'] });
    const body = '{"id": 9223372036854775807, "name": "Survivor", "tag": "hardy"}';
    expect((await request(first.url, '/plants', { body, token })).status).toBe(200);
    await first.close();

    const second = await start(where);
    expect(await second.db.findPlant(9223372036854775807n)).toEqual({
      id: 9223372036854775807n,
      name: 'Survivor',
      tag: 'hardy',
    });
    const replay = await request(second.url, '/plants', { body, token });
    expect(replay.status).toBe(200);
    expect(replay.text).toBe('{"id":9223372036854775807,"name":"Survivor","tag":"hardy"}');
    expect(second.db.appliedMigrations).toEqual([]);
  });

  it('finishes an in-flight request before shutting down', async () => {
    const service = await start(await storage());
    const { token } = await service.db.issueToken({ name: 'inflight', scopes: ['plants:write'] });
    const body = '{"id": 7, "name": "Late"}';
    const { hostname, port } = new URL(service.url);
    const socket = connect(Number(port), hostname);
    const response = (async () => {
      let raw = '';
      for await (const chunk of socket) raw += String(chunk);
      return raw;
    })();
    // Headers and half the body now; the rest only after shutdown has begun.
    socket.write(
      `POST /plants HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 10)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const closed = service.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    // No half-close (FIN) after the body: Node's HTTP server aborts requests whose client does.
    socket.write(body.slice(10));
    const raw = await response;
    expect(raw).toMatch(/^HTTP\/1\.1 200 [\s\S]*\r\n\r\n\{"id":7,"name":"Late"\}$/);
    await closed;
    await expect(request(service.url, '/healthz')).rejects.toThrow();
  });

  if (engine === 'pglite') {
    it('issues and prints one token on the first start of an empty embedded database, never again', async () => {
      const where = await storage();
      const first = await start(where);
      const banner = first.printed.join('');
      const token = /PLANT_STORE_TOKEN=(pst_[A-Za-z0-9_-]{43})/.exec(banner)?.[1];
      expect(token).toBeDefined();
      const created = await request(first.url, '/plants', { body: '{"id": 1, "name": "First"}', token: token ?? '' });
      expect(created.status).toBe(200);
      expect(first.logs.join('')).not.toContain(token);
      await first.close();

      const second = await start(where);
      expect(second.printed).toEqual([]);
    });

    it('does not issue a first-run token in production mode', async () => {
      const service = await startTestService(await storage(), {
        NODE_ENV: 'production',
        ALLOW_EMBEDDED_DATABASE: 'true',
      });
      cleanups.push(() => service.close());
      expect(service.printed).toEqual([]);
      expect(await service.db.countTokens()).toBe(0);
    });

    it('refuses a second process on the same data folder with an error naming it', async () => {
      const where = await storage();
      await start(where);
      const attempt = openDatabase({ dataDir: where.dataDir, lockWaitMs: 0 });
      await expect(attempt).rejects.toBeInstanceOf(DataDirLockedError);
      await expect(attempt).rejects.toThrow(where.dataDir);

      const child = spawnApi([], { ...storageEnv(where), PORT: '0' });
      const { code, stderr } = await collect(child);
      expect(code).toBe(1);
      expect(stderr).toContain(`the data folder ${where.dataDir} is in use`);
    });
  } else {
    it('never issues a first-run token on PostgreSQL', async () => {
      const service = await start(await storage());
      expect(service.printed).toEqual([]);
      expect(await service.db.countTokens()).toBe(0);
    });
  }

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

  it('keeps every plant answered 200 when the process is killed with SIGKILL mid-stream', async () => {
    const where = await storage();
    let token: string | undefined;
    if (engine === 'postgres') {
      const db = await openDatabase({ url: where.databaseUrl, dataDir: where.dataDir });
      token = (await db.issueToken({ name: 'crash', scopes: ['plants:write'] })).token;
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
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    child.kill('SIGKILL');
    await Promise.all(writers);
    await exited;
    expect(answered.length).toBeGreaterThan(10);

    const restarted = await start(where);
    for (const id of answered) expect(await restarted.db.findPlant(id)).toEqual({ id, name: `p${id}` });
  });

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
  });

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
      /^ci-bot\tplants:write\tcreated \S+\texpires never\tlast used never\tlimit default\tactive$/m,
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
  });
});

describe('the plant-store entrypoint', () => {
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
