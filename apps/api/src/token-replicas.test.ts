import { openDatabase } from '@plant-store/db';
import { createTestStorage, testEngines, testToken } from '@plant-store/db/testing';
import type { CreatedToken } from '@plant-store/schema';
import { afterEach, describe, expect, it } from 'vitest';
import { EXPIRED_TOKEN_MESSAGE, INVALID_TOKEN_MESSAGE } from './middleware/bearer-auth.js';
import { failOnContractViolations } from './test-support/checked-fetch.js';
import { expectError } from './test-support/expect-error.js';
import { startServiceProcess } from './test-support/service-process.js';
import { request } from './test-support/test-service.js';

failOnContractViolations();

/** How often each replica reloads the active tokens: the documented bound for a revocation made through another. */
const REVOCATION_BOUND_MS = 5_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Two real service processes on one PostgreSQL database: a token issued, revoked or expiring
// through one is judged the same by the other, within the documented bounds.
describe.skipIf(!testEngines().includes('postgres'))('tokens across two replicas (PostgreSQL)', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  });

  it('expired: refused by both at once; revoked through one: refused there at once, by the other within 5 s', {
    timeout: 60_000,
  }, async () => {
    const storage = await createTestStorage('postgres', { migrated: true });
    cleanups.push(() => storage.dispose());
    const env = { DATABASE_URL: storage.databaseUrl ?? '', DATA_DIR: storage.dataDir, NODE_ENV: 'production' };
    const starting = [startServiceProcess(env), startServiceProcess(env)];
    for (const service of starting) cleanups.push(() => service.then((started) => started.kill()));
    const [first, second] = await Promise.all(starting);
    const urls = [first?.url ?? '', second?.url ?? ''] as const;
    const db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir });
    // The platform's administrator: NODE_ENV=production bounds what a team's token may grant, not its.
    const admin = (
      await db.issueToken(testToken({ name: 'admin', scopes: ['tokens:manage', 'platform:admin', 'plants:read'] }))
    ).token;
    await db.close();

    const issue = async (body: string) => {
      const response = await request(urls[0], '/tokens', { body, token: admin });
      expect(response.status).toBe(201);
      return (response.body as CreatedToken).token;
    };
    const statusesOf = async (token: string) =>
      Promise.all(urls.map(async (url) => (await request(url, '/plants', { token })).status));

    // Used through both (each replica holds every active token), then past its expiry: refused by
    // both at once, from the records they hold.
    // Far enough ahead for the issue and two reads on a loaded machine (1.5 s was not, once).
    const expiresAt = new Date(Date.now() + 6_000);
    const expiring = await issue(
      `{"name": "expiring", "scopes": ["plants:read"], "expiresAt": "${expiresAt.toISOString()}"}`,
    );
    expect(await statusesOf(expiring)).toEqual([200, 200]);
    await sleep(Math.max(0, expiresAt.getTime() - Date.now()));
    for (const url of urls) expectError(await request(url, '/plants', { token: expiring }), 401, EXPIRED_TOKEN_MESSAGE);

    // Issued through the first, used through both, revoked through the first: refused there at
    // once; the second refuses once it reloads the active tokens (every 5 s). What is asserted is
    // that it does; how long it took is printed (a wall-clock bound would flake on a loaded machine).
    const revoked = await issue('{"name": "revoked-elsewhere", "scopes": ["plants:read"]}');
    expect(await statusesOf(revoked)).toEqual([200, 200]);
    const revokedAt = performance.now();
    expect((await request(urls[0], '/tokens/revoked-elsewhere', { method: 'DELETE', token: admin })).status).toBe(204);
    expectError(await request(urls[0], '/plants', { token: revoked }), 401, INVALID_TOKEN_MESSAGE);
    // Polled every 100 ms: the last answer accepted and the first refused bracket the moment.
    let lastAcceptedMs = 0;
    let refusedAfterMs: number | undefined;
    while (refusedAfterMs === undefined && performance.now() - revokedAt < 6 * REVOCATION_BOUND_MS) {
      const sentMs = performance.now() - revokedAt;
      const { status } = await request(urls[1], '/plants', { token: revoked });
      if (status === 401) refusedAfterMs = sentMs;
      else {
        lastAcceptedMs = sentMs;
        await sleep(100);
      }
    }
    expect(refusedAfterMs).toBeDefined();
    console.log(
      `expired: refused by both replicas at once; revoked through replica 1: replica 2 last accepted it ${Math.round(lastAcceptedMs)} ms after, first refused it ${Math.round(refusedAfterMs ?? Number.NaN)} ms after (bound ${REVOCATION_BOUND_MS} ms, polled every 100 ms)`,
    );
  });
});
