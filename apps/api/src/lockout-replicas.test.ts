import { openDatabase } from '@plant-store/db';
import { createTestStorage, testEngines, testToken } from '@plant-store/db/testing';
import type { CreatedToken } from '@plant-store/schema';
import { afterEach, describe, expect, it } from 'vitest';
import { failOnContractViolations } from './test-support/checked-fetch.js';
import { type ServiceProcess, startServiceProcess } from './test-support/service-process.js';
import { request } from './test-support/test-service.js';
import { bogusToken, tokenLookups } from './test-support/token-lookups.js';
import { waitUntil } from './test-support/wait-until.js';

failOnContractViolations();

/** The address a flood of made-up tokens comes from: a NAT shared with real teams. */
const SHARED_ADDRESS = '203.0.113.77';

// Two real service processes on one PostgreSQL database behind one proxy (TRUST_PROXY_HOPS=1), a
// client address flooding them with made-up tokens: every token that exists keeps working from
// that address on both, the second started after the flood began included; the made-up ones cost
// no query once the address is over its limit; and revoking one token, or a name that names none,
// locks out nobody else.
describe.skipIf(!testEngines().includes('postgres'))('the failed-auth lockout across two replicas (PostgreSQL)', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  });

  it('never hits a working token, on either replica, while made-up tokens cost no query', {
    timeout: 120_000,
  }, async () => {
    const storage = await createTestStorage('postgres', { migrated: true });
    cleanups.push(() => storage.dispose());
    const db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir });
    const working = (await db.issueToken(testToken({ name: 'nat-team', team: 'shop', scopes: ['plants:read'] }))).token;
    await db.issueToken(testToken({ name: 'leaving', team: 'shop', scopes: ['plants:read'] }));
    const admin = (
      await db.issueToken(testToken({ name: 'shop-admin', team: 'shop', scopes: ['tokens:manage', 'plants:read'] }))
    ).token;
    await db.close();

    const env = {
      DATABASE_URL: storage.databaseUrl ?? '',
      DATA_DIR: storage.dataDir,
      AUTH_FAILURE_LIMIT: '5/60',
      TRUST_PROXY_HOPS: '1',
      TOKEN_MAX_LIFETIME_DAYS: 'off',
    };
    const start = async () => {
      const service = startServiceProcess(env);
      cleanups.push(() => service.then((started) => started.kill()));
      return service;
    };
    const from = (service: ServiceProcess, token: string) =>
      request(service.url, '/plants', { token, headers: { 'X-Forwarded-For': SHARED_ADDRESS } });
    const flood = async (service: ServiceProcess) => {
      const statuses = [];
      for (let index = 0; index < 8; index++) statuses.push((await from(service, bogusToken())).status);
      return statuses;
    };

    const first = await start();
    // The flood begins on the first replica: 401 for its first 5 made-up tokens, then 429.
    expect(await flood(first)).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    // The second starts after the flood began; it learns of the address from its own failures.
    const second = await start();
    expect(await flood(second)).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);

    // The working token, never used on either replica before, passes on both from that address.
    expect((await from(first, working)).status).toBe(200);
    expect((await from(second, working)).status).toBe(200);
    // More made-up tokens from there cost no query on either.
    const before = [await tokenLookups(first.url), await tokenLookups(second.url)];
    for (const service of [first, second]) {
      for (let index = 0; index < 50; index++) expect((await from(service, bogusToken())).status).toBe(429);
    }
    expect([await tokenLookups(first.url), await tokenLookups(second.url)]).toEqual(before);

    // A name that names no token (404), and a revocation of another token: nobody else is evicted.
    const revoke = (name: string) =>
      request(first.url, `/tokens/${name}`, {
        method: 'DELETE',
        token: admin,
        headers: { 'X-Forwarded-For': '198.51.100.9' },
      });
    expect((await revoke('no-such-token')).status).toBe(404);
    expect((await revoke('leaving')).status).toBe(204);
    expect((await from(first, working)).status).toBe(200);
    expect((await from(second, working)).status).toBe(200);

    // A token issued through the first replica after both started is known to the second once it
    // reloads the active tokens (every 5 s): from the flooded address too, with no lookup.
    const issued = await request(first.url, '/tokens', {
      token: admin,
      body: '{"name": "newcomer", "scopes": ["plants:read"]}',
      headers: { 'X-Forwarded-For': '198.51.100.9' },
    });
    expect(issued.status).toBe(201);
    const newcomer = (issued.body as CreatedToken).token;
    expect((await from(first, newcomer)).status).toBe(200);
    await waitUntil(async () => (await from(second, newcomer)).status === 200, 30_000, 250);
    expect(await tokenLookups(second.url)).toBe(before[1]);
  });
});
