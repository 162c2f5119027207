import type { Database } from '@plant-store/db';
import { testEngines, testToken } from '@plant-store/db/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { failOnContractViolations } from '../test-support/checked-fetch.js';
import { expectError } from '../test-support/expect-error.js';
import { startTestApp, type TestApp } from '../test-support/test-app.js';
import { request } from '../test-support/test-service.js';
import { EXPIRED_TOKEN_MESSAGE, INVALID_TOKEN_MESSAGE } from './bearer-auth.js';

failOnContractViolations();

const HOUR_MS = 60 * 60 * 1000;

// The real app over a real database in this process, so that the test's clock is the app's.
describe.each(testEngines())('bearer tokens: expiry and last use on %s', (engine) => {
  let app: TestApp;
  let db: Database;
  let url: string;

  beforeAll(async () => {
    // Written by hand below (flushTokenUse), not by the timer.
    app = await startTestApp(engine, { database: { tokenUseFlushMs: HOUR_MS } });
    ({ db, url } = app);
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  afterAll(async () => {
    await app?.close();
  });

  const lastUsedAt = async (name: string) =>
    (await db.listTokens()).find((token) => token.name === name)?.lastUsedAt ?? null;

  it('refuses an expired token at once, even while its record is cached, with invalid_token', async () => {
    const { token } = await db.issueToken(
      testToken({
        name: 'expiring',
        scopes: ['plants:read'],
        expiresAt: new Date(Date.now() + HOUR_MS),
      }),
    );
    expect((await request(url, '/plants', { token })).status).toBe(200);
    // An hour later by the wall clock, within the cache's 5 s by the monotonic one.
    vi.useFakeTimers({ now: Date.now() + HOUR_MS, toFake: ['Date'] });
    const expired = await request(url, '/plants', { token });
    expectError(expired, 401, EXPIRED_TOKEN_MESSAGE);
    expect(expired.headers.get('www-authenticate')).toBe('Bearer realm="plant-store", error="invalid_token"');
    vi.useRealTimers();
    expect((await request(url, '/plants', { token })).status).toBe(200);
  });

  it('stamps the last use of a token that authenticated (403 too), not of a refused one, in one write', async () => {
    const used = await db.issueToken(testToken({ name: 'stamped', scopes: ['plants:read'] }));
    const expired = await db.issueToken(
      testToken({
        name: 'stale',
        scopes: ['plants:read'],
        expiresAt: new Date(Date.now() + 60_000),
      }),
    );
    vi.useFakeTimers({ now: Date.parse('2031-01-01T00:00:00.000Z'), toFake: ['Date'] });
    expect((await request(url, '/plants', { token: used.token })).status).toBe(200);
    // A token without the scope still authenticated: its team is using the service.
    expect((await request(url, '/webhooks', { token: used.token })).status).toBe(403);
    expectError(await request(url, '/plants', { token: expired.token }), 401, EXPIRED_TOKEN_MESSAGE);
    expectError(await request(url, '/plants', { token: `${used.token}x` }), 401, INVALID_TOKEN_MESSAGE);
    expect(await lastUsedAt('stamped')).toBeNull();
    await db.flushTokenUse();
    expect(await lastUsedAt('stamped')).toEqual(new Date('2031-01-01T00:00:00.000Z'));
    expect(await lastUsedAt('stale')).toBeNull();
  });
});
