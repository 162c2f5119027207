import { randomBytes } from 'node:crypto';
import { createTestStorage, type TestStorage, testEngines } from '@plant-store/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INVALID_TOKEN_MESSAGE } from './middleware/bearer-auth.js';
import { failOnContractViolations } from './test-support/checked-fetch.js';
import { expectError } from './test-support/expect-error.js';
import { request, startTestService, type TestService } from './test-support/test-service.js';

failOnContractViolations();

/** A well-formed token no one issued: `pst_` and 43 random base64url characters. */
function bogusToken(): string {
  return `pst_${randomBytes(32).toString('base64url')}`;
}

/** How many token lookups reached the database so far (the metric times only those). */
async function lookups(service: TestService): Promise<number> {
  const text = (await request(service.url, '/metrics')).text;
  const line = text
    .split('\n')
    .find((candidate) =>
      candidate.startsWith('db_call_duration_seconds_count{operation="authenticateToken",outcome="ok"} '),
    );
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const TOO_MANY = /^too many failed authentications from this address; retry after \d+ s$/;

describe.each(testEngines())('failed authentications per client address on %s', (engine) => {
  let storage: TestStorage;
  let service: TestService;

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    service = await startTestService(storage, { AUTH_FAILURE_LIMIT: '5/60', TRUST_PROXY_HOPS: '1' });
  });
  afterAll(async () => {
    await service?.close();
    await storage?.dispose();
  });

  const from = (address: string, token: string) =>
    request(service.url, '/plants', { token, headers: { 'X-Forwarded-For': address } });

  it('answers 401 for the first failures, then 429 without a database lookup, however many tokens follow', async () => {
    const address = '203.0.113.10';
    for (let index = 0; index < 5; index++) expectError(await from(address, bogusToken()), 401, INVALID_TOKEN_MESSAGE);
    const before = await lookups(service);
    for (let index = 0; index < 100; index++) {
      const refused = await from(address, bogusToken());
      expectError(refused, 429, TOO_MANY);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    }
    // Not one of the 100 reached the database.
    expect(await lookups(service)).toBe(before);
    // A malformed credential is refused the same way.
    expectError(await from(address, 'not-a-token!'), 429, TOO_MANY);
    expectError(
      await request(service.url, '/plants', { headers: { Authorization: 'Bearer %%%', 'X-Forwarded-For': address } }),
      429,
    );
    // Another address is not affected.
    expectError(await from('203.0.113.11', bogusToken()), 401);
    // The platform learns once which address it is.
    const warnings = service.logs.filter((line) => line.includes('failed authentications over the limit'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0] ?? '{}')).toMatchObject({ level: 'warn', clientAddress: address, failures: 5 });
  });

  it('still serves the tokens this process has seen work from an address over its limit (a shared NAT)', async () => {
    const address = '203.0.113.20';
    const { token } = await service.db.issueToken({ name: 'shared-nat-team', scopes: ['plants:read'] });
    expect((await from(address, token)).status).toBe(200);
    for (let index = 0; index < 6; index++) await from(address, bogusToken());
    expect((await from(address, bogusToken())).status).toBe(429);
    expect((await from(address, token)).status).toBe(200);
    // A token this process has not seen yet is refused from there until the window ends (the price
    // of asking the database nothing for such an address); from elsewhere it works at once.
    const fresh = (await service.db.issueToken({ name: 'new-team', scopes: ['plants:read'] })).token;
    expectError(await from(address, fresh), 429, TOO_MANY);
    expect((await from('203.0.113.21', fresh)).status).toBe(200);
  });

  it('counts an expired or revoked token as a failure too', async () => {
    const address = '203.0.113.30';
    const { token } = await service.db.issueToken({ name: 'revoked-team', scopes: ['plants:read'] });
    expect((await from(address, token)).status).toBe(200);
    await service.db.revokeToken('revoked-team');
    for (let index = 0; index < 5; index++) expectError(await from(address, token), 401, INVALID_TOKEN_MESSAGE);
    expect((await from(address, bogusToken())).status).toBe(429);
  });
});

describe('AUTH_FAILURE_LIMIT=off', () => {
  it('answers every unknown token 401 after a lookup', async () => {
    const storage = await createTestStorage('pglite', { migrated: true });
    const service = await startTestService(storage, { AUTH_FAILURE_LIMIT: 'off' });
    try {
      const statuses = new Set<number>();
      for (let index = 0; index < 30; index++) {
        statuses.add((await request(service.url, '/plants', { token: bogusToken() })).status);
      }
      expect([...statuses]).toEqual([401]);
      expect(await lookups(service)).toBeGreaterThanOrEqual(30);
    } finally {
      await service.close();
      await storage.dispose();
    }
  });
});
