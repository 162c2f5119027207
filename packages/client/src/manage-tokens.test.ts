import { afterEach, describe, expect, it } from 'vitest';
import { closeScriptedServers, errorAnswer, json, startScriptedServer } from './test-support/scripted-server.js';
import { caught, createTestClient } from './test-support/test-client.js';

afterEach(closeScriptedServers);

const CREATED_AT = '2026-11-23T10:48:07.123Z';
const TOKEN = `pst_${'k'.repeat(43)}`;
const LISTED =
  `[{"name":"admin","team":"inventory","scopes":["tokens:manage"],"createdAt":"${CREATED_AT}"},` +
  `{"name":"ci","team":"inventory","scopes":["plants:read"],"createdAt":"${CREATED_AT}","expiresAt":"2030-01-01T00:00:00.000Z",` +
  `"lastUsedAt":"2026-11-25T08:00:00.000Z","rateLimit":{"requests":600,"perSeconds":60}}]`;

describe('createToken', () => {
  it('sends POST /tokens with the body written exactly and returns the record with the token', async () => {
    const answer = `{"name":"ci","team":"inventory","scopes":["plants:read"],"createdAt":"${CREATED_AT}","rateLimit":{"requests":600,"perSeconds":60},"token":"${TOKEN}"}`;
    const server = await startScriptedServer([json(201, answer)]);
    const created = await createTestClient(server.url).createToken({
      name: 'ci',
      scopes: ['plants:read'],
      rateLimit: { requests: 600n, perSeconds: 60 },
    });
    expect(created).toStrictEqual({
      name: 'ci',
      team: 'inventory',
      scopes: ['plants:read'],
      createdAt: CREATED_AT,
      rateLimit: { requests: 600, perSeconds: 60 },
      token: TOKEN,
    });
    expect(server.requests.map(({ method, url, body }) => `${method} ${url} ${body}`)).toEqual([
      'POST /tokens {"name":"ci","scopes":["plants:read"],"rateLimit":{"requests":600,"perSeconds":60}}',
    ]);
  });

  it('refuses an unknown scope or a bad rate limit before sending', async () => {
    const server = await startScriptedServer([]);
    const client = createTestClient(server.url);
    // @ts-expect-error -- not a scope of the contract
    expect(await caught(client.createToken({ name: 'ci', scopes: ['plants:*'] }))).toMatchObject({
      kind: 'invalid-input',
      message: 'each scope must be one of plants:read, plants:write, webhooks:manage, tokens:manage, platform:admin',
    });
    const zero = client.createToken({ name: 'ci', scopes: ['plants:read'], rateLimit: { requests: 0, perSeconds: 1 } });
    expect(await caught(zero)).toMatchObject({ kind: 'invalid-input', error: 400 });
    expect(server.requests).toHaveLength(0);
  });

  it('throws the 409 of a taken name, and does not retry after a lost answer', async () => {
    const taken = await startScriptedServer([errorAnswer(409, 409, 'a token named "ci" already exists')]);
    const error = await caught(createTestClient(taken.url).createToken({ name: 'ci', scopes: ['plants:read'] }));
    expect(error).toMatchObject({ kind: 'error-response', status: 409, error: 409 });
    const lost = await startScriptedServer([{ status: 201, dropConnection: true }, json(201, '{}')]);
    const network = await caught(createTestClient(lost.url).createToken({ name: 'ci', scopes: ['plants:read'] }));
    expect(network).toMatchObject({ kind: 'network' });
    expect(lost.requests).toHaveLength(1);
  });

  it('retries the service’s own 429, after its Retry-After', async () => {
    const answer = `{"name":"ci","team":"inventory","scopes":["plants:read"],"createdAt":"${CREATED_AT}","token":"${TOKEN}"}`;
    const server = await startScriptedServer([
      errorAnswer(429, 429, 'too many requests', { 'Retry-After': '0' }),
      json(201, answer),
    ]);
    expect((await createTestClient(server.url).createToken({ name: 'ci', scopes: ['plants:read'] })).token).toBe(TOKEN);
    expect(server.requests).toHaveLength(2);
  });
});

describe('listTokens', () => {
  it('sends GET /tokens and returns the tokens, a token dropped if one came', async () => {
    const server = await startScriptedServer([
      json(200, LISTED.replace('"createdAt"', `"token":"${TOKEN}","createdAt"`)),
    ]);
    const tokens = await createTestClient(server.url).listTokens();
    expect(tokens).toStrictEqual([
      { name: 'admin', team: 'inventory', scopes: ['tokens:manage'], createdAt: CREATED_AT },
      {
        name: 'ci',
        team: 'inventory',
        scopes: ['plants:read'],
        createdAt: CREATED_AT,
        expiresAt: '2030-01-01T00:00:00.000Z',
        lastUsedAt: '2026-11-25T08:00:00.000Z',
        rateLimit: { requests: 600, perSeconds: 60 },
      },
    ]);
    expect(JSON.stringify(tokens)).not.toContain(TOKEN);
    expect(server.requests.map(({ method, url }) => `${method} ${url}`)).toEqual(['GET /tokens']);
  });

  it('throws the 403 of a token without tokens:manage', async () => {
    const server = await startScriptedServer([errorAnswer(403, 403, 'this token lacks the tokens:manage scope')]);
    expect(await caught(createTestClient(server.url).listTokens())).toMatchObject({ status: 403, error: 403 });
  });
});

describe('revokeToken', () => {
  it('sends DELETE /tokens/{name} and resolves on 204', async () => {
    const server = await startScriptedServer([{ status: 204 }]);
    await expect(createTestClient(server.url).revokeToken('ci.bot-2')).resolves.toBeUndefined();
    expect(server.requests.map(({ method, url }) => `${method} ${url}`)).toEqual(['DELETE /tokens/ci.bot-2']);
  });

  it('refuses a name no token can have before sending (no path tricks)', async () => {
    const server = await startScriptedServer([]);
    const error = await caught(createTestClient(server.url).revokeToken('../plants/1'));
    expect(error).toMatchObject({ kind: 'invalid-input', error: 400 });
    expect(server.requests).toHaveLength(0);
  });

  it('throws a first 404, but resolves on the 404 of a retry after a 503', async () => {
    const missing = await startScriptedServer([errorAnswer(404, 404, 'no active token is named "ci"')]);
    expect(await caught(createTestClient(missing.url).revokeToken('ci'))).toMatchObject({ error: 404 });
    const server = await startScriptedServer([
      errorAnswer(503, 503, 'the database is unavailable; retry shortly', { 'Retry-After': '0' }),
      errorAnswer(404, 404, 'no active token is named "ci"'),
    ]);
    await expect(createTestClient(server.url).revokeToken('ci')).resolves.toBeUndefined();
    expect(server.requests).toHaveLength(2);
  });
});
