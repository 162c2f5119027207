import { createTestStorage, TEST_ACTOR, type TestStorage, testEngines, testToken } from '@plant-store/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INVALID_TOKEN_MESSAGE } from './middleware/bearer-auth.js';
import { failOnContractViolations } from './test-support/checked-fetch.js';
import { expectError } from './test-support/expect-error.js';
import { request, startTestService, type TestService } from './test-support/test-service.js';
import { bogusToken, tokenLookups } from './test-support/token-lookups.js';

failOnContractViolations();

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
    const before = await tokenLookups(service.url);
    for (let index = 0; index < 100; index++) {
      const refused = await from(address, bogusToken());
      expectError(refused, 429, TOO_MANY);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    }
    // Not one of the 100 reached the database.
    expect(await tokenLookups(service.url)).toBe(before);
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

  it('still serves every active token from an address over its limit (a shared NAT), one never used here included', async () => {
    const address = '203.0.113.20';
    const { token } = await service.db.issueToken(testToken({ name: 'shared-nat-team', scopes: ['plants:read'] }));
    expect((await from(address, token)).status).toBe(200);
    for (let index = 0; index < 6; index++) await from(address, bogusToken());
    expect((await from(address, bogusToken())).status).toBe(429);
    expect((await from(address, token)).status).toBe(200);
    // A token this process has never seen authenticate is known all the same: every process holds
    // every active token, so a new team behind the same NAT works at once, with no lookup.
    const fresh = (await service.db.issueToken(testToken({ name: 'new-team', scopes: ['plants:read'] }))).token;
    const before = await tokenLookups(service.url);
    expect((await from(address, fresh)).status).toBe(200);
    expect(await tokenLookups(service.url)).toBe(before);
  });

  it('evicts only the revoked token, and nothing for a name no token has (a 404)', async () => {
    const address = '203.0.113.25';
    const { token } = await service.db.issueToken(testToken({ name: 'bystander-team', scopes: ['plants:read'] }));
    await service.db.issueToken(testToken({ name: 'leaving-team', scopes: ['plants:read'] }));
    for (let index = 0; index < 6; index++) await from(address, bogusToken());
    expect((await from(address, bogusToken())).status).toBe(429);
    await expect(service.db.revokeToken('no-such-team', { actor: TEST_ACTOR })).rejects.toThrow('no active token');
    await service.db.revokeToken('leaving-team', { actor: TEST_ACTOR });
    expect((await from(address, token)).status).toBe(200);
  });

  it('counts an expired or revoked token as a failure too', async () => {
    const address = '203.0.113.30';
    const { token } = await service.db.issueToken(testToken({ name: 'revoked-team', scopes: ['plants:read'] }));
    expect((await from(address, token)).status).toBe(200);
    await service.db.revokeToken('revoked-team', { actor: TEST_ACTOR });
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
      expect(await tokenLookups(service.url)).toBeGreaterThanOrEqual(30);
    } finally {
      await service.close();
      await storage.dispose();
    }
  });
});
