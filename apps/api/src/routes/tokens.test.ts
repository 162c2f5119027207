import { createPlantStoreClient, type PlantStoreClient, PlantStoreError } from '@plant-store/client';
import type { Database } from '@plant-store/db';
import { testEngines, testToken } from '@plant-store/db/testing';
import { type CreatedToken, isRfc3339DateTime, type Token } from '@plant-store/schema';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { EXPIRED_TOKEN_MESSAGE, INVALID_TOKEN_MESSAGE } from '../middleware/bearer-auth.js';
import { checkedFetch, failOnContractViolations } from '../test-support/checked-fetch.js';
import { expectError } from '../test-support/expect-error.js';
import { startTestApp, type TestApp } from '../test-support/test-app.js';
import { request } from '../test-support/test-service.js';

failOnContractViolations();

const HOUR_MS = 60 * 60 * 1000;

// The real app on a real port over a real database, as server.ts wires it.
describe.each(testEngines())('the token routes on %s', (engine) => {
  let app: TestApp;
  let db: Database;
  let url: string;
  let admin: string;
  let client: PlantStoreClient;

  beforeAll(async () => {
    // Last-use times are written by hand below (flushTokenUse), not by the timer.
    app = await startTestApp(engine, { database: { tokenUseFlushMs: HOUR_MS } });
    ({ db, url } = app);
    // A team's administrator: it grants the scopes it holds (this app sets no lifetime or rate bounds).
    admin = (
      await db.issueToken(testToken({ name: 'admin', scopes: ['tokens:manage', 'plants:read', 'plants:write'] }))
    ).token;
    client = createPlantStoreClient({ baseUrl: url, token: admin, fetch: checkedFetch, retry: { attempts: 1 } });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  afterAll(async () => {
    await app?.close();
  });

  const issue = (body: string, token = admin) => request(url, '/tokens', { body, token });

  describe('POST /tokens', () => {
    it('answers 201 with the record and the token, shown this once; the token works at once', async () => {
      const before = Date.now();
      const response = await issue(
        '{"name": "inventory-sync", "scopes": ["plants:read", "plants:write"], "expiresAt": "2099-01-01T00:00:00+01:00", "rateLimit": {"requests": 600, "perSeconds": 60}, "token": "mine", "id": 1}',
      );
      expect(response.status).toBe(201);
      const created = response.body as CreatedToken;
      expect(Object.keys(created)).toEqual(['name', 'team', 'scopes', 'createdAt', 'expiresAt', 'rateLimit', 'token']);
      expect(created).toMatchObject({
        name: 'inventory-sync',
        team: 'default',
        scopes: ['plants:read', 'plants:write'],
        expiresAt: '2098-12-31T23:00:00.000Z',
        rateLimit: { requests: 600n, perSeconds: 60n },
      });
      expect(created.token).toMatch(/^pst_[A-Za-z0-9_-]{43}$/);
      expect(isRfc3339DateTime(created.createdAt)).toBe(true);
      expect(Date.parse(created.createdAt)).toBeGreaterThanOrEqual(before - 1000);

      expect((await request(url, '/plants', { token: created.token })).status).toBe(200);
      const listed = await request(url, '/tokens', { token: admin });
      expect(listed.text).not.toContain(created.token);
      expect(listed.text).not.toContain('"token"');
    });

    it('issues a plain token: no expiry, the default limit, listed without either', async () => {
      const created = await client.createToken({ name: 'reporting', scopes: ['plants:read'] });
      expect(Object.keys(created)).toEqual(['name', 'team', 'scopes', 'createdAt', 'token']);
      const listed = (await client.listTokens()).find((token) => token.name === 'reporting');
      expect(listed).toEqual({
        name: 'reporting',
        team: 'default',
        scopes: ['plants:read'],
        createdAt: created.createdAt,
      });
    });

    it('answers 409 for a taken name, a revoked one included, and issues nothing', async () => {
      await client.createToken({ name: 'taken', scopes: ['plants:read'] });
      const again = await issue('{"name": "taken", "scopes": ["plants:write"]}');
      expectError(again, 409, 'a token named "taken" already exists or existed, ignoring case');
      // Another case is the same name: one name in a log line means one token.
      expectError(await issue('{"name": "TAKEN", "scopes": ["plants:read"]}'), 409);
      await client.revokeToken('taken');
      expectError(await issue('{"name": "taken", "scopes": ["plants:read"]}'), 409);
      expect((await db.listTokens({ includeRevoked: true })).filter((token) => token.name === 'taken')).toHaveLength(1);
    });

    it.each([
      ['not JSON', '{"name": ', 400, 'request body is not valid JSON'],
      ['no name', '{"scopes": ["plants:read"]}', 400, 'name is required'],
      ['a name with a space', '{"name": "two words", "scopes": ["plants:read"]}', 400, 'name must be 1-100 letters'],
      ['a name too long', `{"name": "${'a'.repeat(101)}", "scopes": ["plants:read"]}`, 400, 'name must be 1-100'],
      ['a NUL in the name', '{"name": "a\\u0000", "scopes": ["plants:read"]}', 400, 'name must be 1-100'],
      ['no scopes', '{"name": "x"}', 400, 'scopes is required'],
      ['empty scopes', '{"name": "x", "scopes": []}', 400, 'scopes must name at least one scope'],
      ['an unknown scope', '{"name": "x", "scopes": ["plants:admin"]}', 400, 'each scope must be one of'],
      ['a scope twice', '{"name": "x", "scopes": ["plants:read", "plants:read"]}', 400, 'must not name a scope twice'],
      ['a scope of another type', '{"name": "x", "scopes": [1]}', 400, 'each scope must be one of'],
      [
        'expiry in the past',
        '{"name": "x", "scopes": ["plants:read"], "expiresAt": "2001-01-01T00:00:00Z"}',
        400,
        'expiresAt must be in the future',
      ],
      [
        'expiry not RFC 3339',
        '{"name": "x", "scopes": ["plants:read"], "expiresAt": "2099-01-01"}',
        400,
        'expiresAt must be an RFC 3339',
      ],
      [
        'expiry as a number',
        '{"name": "x", "scopes": ["plants:read"], "expiresAt": 4102444800}',
        400,
        'expiresAt must be an RFC 3339',
      ],
      [
        'a limit of 0',
        '{"name": "x", "scopes": ["plants:read"], "rateLimit": {"requests": 0, "perSeconds": 1}}',
        400,
        'rateLimit.requests must be an integer between 1 and 1000000',
      ],
      [
        'a huge limit',
        '{"name": "x", "scopes": ["plants:read"], "rateLimit": {"requests": 99999999999999999999999, "perSeconds": 1}}',
        400,
        'rateLimit.requests must be',
      ],
      [
        'a fractional window',
        '{"name": "x", "scopes": ["plants:read"], "rateLimit": {"requests": 5, "perSeconds": 1.5}}',
        400,
        'rateLimit.perSeconds must be',
      ],
      [
        'a window over a day',
        '{"name": "x", "scopes": ["plants:read"], "rateLimit": {"requests": 5, "perSeconds": 86401}}',
        400,
        'rateLimit.perSeconds must be',
      ],
      [
        'half a limit',
        '{"name": "x", "scopes": ["plants:read"], "rateLimit": {"requests": 5}}',
        400,
        'rateLimit.perSeconds is required',
      ],
      [
        'a limit as text',
        '{"name": "x", "scopes": ["plants:read"], "rateLimit": "5/1"}',
        400,
        'rateLimit must be an object',
      ],
    ])('refuses %s with %i, issuing nothing', async (_, body, status, message) => {
      expectError(await issue(body), status, message);
      expect((await db.listTokens()).map((token) => token.name)).not.toContain('x');
    });

    it('needs tokens:manage: 401 without a token, 403 with another scope, before reading the body', async () => {
      const plantsOnly = (
        await db.issueToken(testToken({ name: 'plants-only', scopes: ['plants:read', 'plants:write'] }))
      ).token;
      expectError(await request(url, '/tokens', { body: '{}' }), 401);
      const forbidden = await issue('{not even json', plantsOnly);
      expectError(forbidden, 403, 'this token lacks the tokens:manage scope');
      expect(forbidden.headers.get('www-authenticate')).toContain('scope="tokens:manage"');
      expectError(await request(url, '/tokens', { token: plantsOnly }), 403);
      expectError(await request(url, '/tokens/admin', { method: 'DELETE', token: plantsOnly }), 403);
    });
  });

  describe('GET /tokens', () => {
    it('lists active tokens oldest first with expiry, last use and limit, never revoked ones or secrets', async () => {
      const used = await client.createToken({
        name: 'listed',
        scopes: ['plants:read'],
        expiresAt: '2099-06-01T12:00:00.5Z',
        rateLimit: { requests: 5, perSeconds: 1 },
      });
      vi.useFakeTimers({ now: Date.parse('2031-02-03T04:05:06.789Z'), toFake: ['Date'] });
      expect((await request(url, '/plants', { token: used.token })).status).toBe(200);
      vi.useRealTimers();
      await db.flushTokenUse();
      const gone = await client.createToken({ name: 'gone', scopes: ['plants:read'] });
      await client.revokeToken('gone');

      const tokens: Token[] = await client.listTokens();
      const names = tokens.map((token) => token.name);
      expect(names[0]).toBe('admin');
      expect(names).toContain('listed');
      expect(names).not.toContain('gone');
      expect(tokens.find((token) => token.name === 'listed')).toEqual({
        name: 'listed',
        team: 'default',
        scopes: ['plants:read'],
        createdAt: used.createdAt,
        expiresAt: '2099-06-01T12:00:00.500Z',
        lastUsedAt: '2031-02-03T04:05:06.789Z',
        rateLimit: { requests: 5, perSeconds: 1 },
      });
      const text = (await request(url, '/tokens', { token: admin })).text;
      for (const secret of [used.token, gone.token, admin]) expect(text).not.toContain(secret);
    });

    it('lists an expired token until it is revoked, while refusing it', async () => {
      const { token } = await db.issueToken(
        testToken({
          name: 'lapsing',
          scopes: ['plants:read'],
          expiresAt: new Date(Date.now() + HOUR_MS),
        }),
      );
      vi.useFakeTimers({ now: Date.now() + 2 * HOUR_MS, toFake: ['Date'] });
      const refused = await request(url, '/plants', { token });
      expectError(refused, 401, EXPIRED_TOKEN_MESSAGE);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="plant-store", error="invalid_token"');
      expect((await client.listTokens()).map((listed) => listed.name)).toContain('lapsing');
    });
  });

  describe('DELETE /tokens/{name}', () => {
    it('revokes: 204, the token is refused at once here, then 404', async () => {
      const { token } = await client.createToken({ name: 'short-lived', scopes: ['plants:read'] });
      expect((await request(url, '/plants', { token })).status).toBe(200);
      const revoked = await request(url, '/tokens/short-lived', { method: 'DELETE', token: admin });
      expect(revoked.status).toBe(204);
      expect(revoked.text).toBe('');
      expectError(await request(url, '/plants', { token }), 401, INVALID_TOKEN_MESSAGE);
      expectError(
        await request(url, '/tokens/short-lived', { method: 'DELETE', token: admin }),
        404,
        'no active token is named "short-lived"',
      );
      const error = await client.revokeToken('short-lived').catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(PlantStoreError);
      expect(error).toMatchObject({ status: 404, error: 404 });
    });

    it.each([
      ['/tokens/never-issued', 'no active token is named "never-issued"'],
      ['/tokens/two%20words', 'no token has this name'],
      ['/tokens/%00', 'no token has this name'],
      [`/tokens/${'a'.repeat(101)}`, 'no token has this name'],
    ])('answers 404 for %s', async (path, message) => {
      expectError(await request(url, path, { method: 'DELETE', token: admin }), 404, message);
    });

    it('lets a manager revoke itself: its next request is refused', async () => {
      const { token } = await db.issueToken(testToken({ name: 'self-revoker', scopes: ['tokens:manage'] }));
      expect((await request(url, '/tokens/self-revoker', { method: 'DELETE', token })).status).toBe(204);
      expectError(await request(url, '/tokens', { token }), 401);
    });
  });
});
