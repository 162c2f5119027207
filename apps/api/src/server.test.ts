import { connect } from 'node:net';
import { DataDirLockedError, openDatabase } from '@plant-store/db';
import { testEngines, testToken } from '@plant-store/db/testing';
import { describe, expect, it } from 'vitest';
import { failOnContractViolations } from './test-support/checked-fetch.js';
import { serviceLifecycle } from './test-support/service-lifecycle.js';
import { collect, spawnApi, storageEnv } from './test-support/service-process.js';
import { request, startTestService } from './test-support/test-service.js';

failOnContractViolations();

// The service in this process (restarts, shutdown, the first-run token, the data folder's lock).
// The built entrypoint run as a process of its own: service-process.test.ts.
describe.each(testEngines())('service lifecycle on %s', (engine) => {
  const { cleanups, storage, start } = serviceLifecycle(engine);

  it('keeps committed plants across a restart on the same storage', async () => {
    const where = await storage();
    const first = await start(where);
    const { token } = await first.db.issueToken(testToken({ name: 'restart', scopes: ['plants:write'] }));
    const body = '{"id": 9223372036854775807, "name": "Survivor", "tag": "hardy"}';
    expect((await request(first.url, '/plants', { body, token })).status).toBe(200);
    await first.close();

    const second = await start(where);
    expect((await second.db.findPlant(9223372036854775807n))?.plant).toEqual({
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
    const { token } = await service.db.issueToken(testToken({ name: 'inflight', scopes: ['plants:write'] }));
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
      // More tokens, in words that work on a fresh machine with only npm: over HTTP, or the command.
      expect(banner).toContain('POST /tokens with this one');
      expect(banner).toContain('npx --yes pnpm@10.34.9 run token create --name NAME --scope plants:write');
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
});
