import type { Database } from '@plant-store/db';
import { createTestStorage, type TestStorage, testEngines, testToken } from '@plant-store/db/testing';
import type { AuditEvent, CreatedToken, CreatedWebhook, Token, Webhook } from '@plant-store/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failOnContractViolations } from '../test-support/checked-fetch.js';
import { expectError } from '../test-support/expect-error.js';
import { request, startTestService, type TestService } from '../test-support/test-service.js';

failOnContractViolations();

const DAY_MS = 24 * 60 * 60 * 1000;

// The real service with its production policy (TOKEN_MAX_LIFETIME_DAYS=365, TOKEN_MAX_RATE_LIMIT
// 10000/10) and small caps, as two teams and the platform operator use it: what one team may
// see, change and grant of another's, and what the audit log keeps of it. Receivers are public IP
// literals and nothing is delivered (WEBHOOKS_DISPATCH=false).
describe.each(testEngines())('walls between teams on %s', (engine) => {
  let storage: TestStorage;
  let service: TestService;
  let db: Database;
  /** Each team's administrator, and the platform's. */
  const admins = { red: '', blue: '', platform: '' };
  /** Each team's webhook manager. */
  const managers = { red: '', blue: '' };

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    service = await startTestService(storage, {
      WEBHOOKS_DISPATCH: 'false',
      WEBHOOKS_PER_TEAM_LIMIT: '2',
      TOKENS_PER_TEAM_LIMIT: '6',
      TRUST_PROXY_HOPS: '1',
    });
    db = service.db;
    // What the command line issues: each team's first tokens, and the platform's own.
    const issue = async (name: string, team: string, scopes: string[]) =>
      (await db.issueToken(testToken({ name, team, scopes }))).token;
    admins.red = await issue('red-admin', 'red', ['tokens:manage', 'plants:read', 'webhooks:manage']);
    admins.blue = await issue('blue-admin', 'blue', ['tokens:manage', 'plants:read']);
    admins.platform = await issue('platform', 'platform', ['platform:admin', 'tokens:manage', 'webhooks:manage']);
    managers.red = await issue('red-hooks', 'red', ['webhooks:manage', 'plants:read']);
    managers.blue = await issue('blue-hooks', 'blue', ['webhooks:manage', 'plants:read']);
  });
  afterAll(async () => {
    await service?.close();
    await storage?.dispose();
  });

  const as = (token: string, path: string, options: { method?: string; body?: string; from?: string } = {}) =>
    request(service.url, path, {
      token,
      ...(options.method === undefined ? {} : { method: options.method }),
      ...(options.body === undefined ? {} : { body: options.body }),
      headers: { 'X-Forwarded-For': options.from ?? '198.51.100.1' },
    });
  const subscribe = async (token: string, url: string) => {
    const response = await as(token, '/webhooks', { body: JSON.stringify({ url }) });
    expect(response.status).toBe(201);
    return response.body as CreatedWebhook;
  };

  describe('subscriptions', () => {
    it("are each team's own: another team lists none of them, and every route answers 404 for them", async () => {
      const red = await subscribe(managers.red, 'https://8.8.8.8/red');
      const blue = await subscribe(managers.blue, 'https://8.8.4.4/blue');
      expect(red.team).toBe('red');
      expect(((await as(managers.blue, '/webhooks')).body as Webhook[]).map((webhook) => webhook.id)).toEqual([
        blue.id,
      ]);
      expect(((await as(managers.red, '/webhooks')).body as Webhook[]).map((webhook) => webhook.id)).toEqual([red.id]);

      await db.createPlant({ id: 1n, name: 'Fern' });
      await db.fanOutEvents({ maxDeliveries: 100 });
      const redDeliveries = await as(managers.red, `/webhooks/${red.id}/deliveries`);
      const [delivery] = redDeliveries.body as { id: bigint }[];
      if (delivery === undefined) throw new Error('red has a delivery');
      const message = `no webhook with id ${red.id}`;
      expectError(await as(managers.blue, `/webhooks/${red.id}/deliveries`), 404, message);
      expectError(
        await as(managers.blue, `/webhooks/${red.id}/deliveries/${delivery.id}/resend`, { method: 'POST' }),
        404,
        `webhook ${red.id} has no delivery with id ${delivery.id}`,
      );
      expectError(await as(managers.blue, `/webhooks/${red.id}`, { method: 'DELETE' }), 404, message);
      // Nothing of red's changed.
      expect((await db.listWebhooks({ team: 'red' })).map((webhook) => webhook.id)).toEqual([red.id]);
      expect((await as(managers.red, `/webhooks/${red.id}`, { method: 'DELETE' })).status).toBe(204);
      expect((await as(managers.blue, `/webhooks/${blue.id}`, { method: 'DELETE' })).status).toBe(204);
    });

    it("count against each team's own cap: one team at its cap leaves the other free", async () => {
      await subscribe(managers.red, 'https://8.8.8.8/one');
      await subscribe(managers.red, 'https://8.8.8.8/two');
      expectError(
        await as(managers.red, '/webhooks', { body: '{"url": "https://8.8.8.8/three"}' }),
        409,
        'team "red" has 2 webhooks registered, its limit; delete one first',
      );
      const blue = await subscribe(managers.blue, 'https://8.8.4.4/free');
      expect(blue.team).toBe('blue');
      for (const webhook of await db.listWebhooks()) {
        await as(admins.platform, `/webhooks/${webhook.id}`, { method: 'DELETE' });
      }
    });

    it('are all seen and managed by platform:admin', async () => {
      const red = await subscribe(managers.red, 'https://8.8.8.8/seen');
      const blue = await subscribe(managers.blue, 'https://8.8.4.4/seen');
      const listed = (await as(admins.platform, '/webhooks')).body as Webhook[];
      expect(listed.map((webhook) => [webhook.id, webhook.team])).toEqual([
        [red.id, 'red'],
        [blue.id, 'blue'],
      ]);
      expect((await as(admins.platform, `/webhooks/${red.id}/deliveries`)).status).toBe(200);
      expect((await as(admins.platform, `/webhooks/${red.id}`, { method: 'DELETE' })).status).toBe(204);
      expect((await as(admins.platform, `/webhooks/${blue.id}`, { method: 'DELETE' })).status).toBe(204);
      expect(await db.listWebhooks()).toEqual([]);
    });
  });

  describe('delegation', () => {
    const future = (days: number) => new Date(Date.now() + days * DAY_MS).toISOString();
    const grant = (token: string, fields: Record<string, unknown>) =>
      as(token, '/tokens', { body: JSON.stringify({ expiresAt: future(30), ...fields }) });

    it('grants only scopes the granting token holds, for its own team, within the platform policy: 403 naming the rule', async () => {
      const refusals: Array<[Record<string, unknown>, string]> = [
        [
          { name: 'red-writer', scopes: ['plants:write'] },
          'this token cannot grant plants:write: a token grants only scopes it holds itself',
        ],
        [{ name: 'red-root', scopes: ['platform:admin'] }, 'this token cannot grant platform:admin'],
        [
          { name: 'blue-spy', scopes: ['plants:read'], team: 'blue' },
          'only a token with platform:admin may issue tokens for another team than its own ("red")',
        ],
        [
          { name: 'red-forever', scopes: ['plants:read'], expiresAt: undefined },
          "a team's tokens must expire within 365 days (TOKEN_MAX_LIFETIME_DAYS): set expiresAt",
        ],
        [
          { name: 'red-millennium', scopes: ['plants:read'], expiresAt: '9999-12-31T00:00:00Z' },
          'expiresAt is further away than the 365 days a team may grant (TOKEN_MAX_LIFETIME_DAYS)',
        ],
        [
          { name: 'red-flood', scopes: ['plants:read'], rateLimit: { requests: 1_000_000, perSeconds: 1 } },
          'rateLimit 1000000/1 is larger than the 10000/10 a team may grant (TOKEN_MAX_RATE_LIMIT)',
        ],
        [
          { name: 'red-burst', scopes: ['plants:read'], rateLimit: { requests: 20_000, perSeconds: 20 } },
          'rateLimit 20000/20 is larger than the 10000/10 a team may grant (TOKEN_MAX_RATE_LIMIT)',
        ],
      ];
      for (const [fields, message] of refusals) {
        const body = JSON.stringify({ expiresAt: future(30), ...fields });
        expectError(await as(admins.red, '/tokens', { body }), 403, message);
      }
      const names = (await db.listTokens({ includeRevoked: true })).map((token) => token.name);
      for (const [fields] of refusals) expect(names).not.toContain(fields.name);
    });

    it('issues within the rules, its own scopes included, and the new token is of the same team', async () => {
      const issued = await grant(admins.red, {
        name: 'red-deputy',
        scopes: ['tokens:manage', 'plants:read'],
        rateLimit: { requests: 100, perSeconds: 1 },
      });
      expect(issued.status).toBe(201);
      const deputy = issued.body as CreatedToken;
      expect(deputy).toMatchObject({ team: 'red', scopes: ['tokens:manage', 'plants:read'] });
      // The deputy grants no more than it holds either.
      expectError(
        await grant(deputy.token, { name: 'red-deputy-hooks', scopes: ['webhooks:manage'] }),
        403,
        'this token cannot grant webhooks:manage',
      );
      expect((await grant(deputy.token, { name: 'red-reader', scopes: ['plants:read'] })).status).toBe(201);
    });

    it("lists and revokes only its own team's tokens: another team's name answers 404", async () => {
      const listed = ((await as(admins.blue, '/tokens')).body as Token[]).map((token) => [token.name, token.team]);
      expect(listed).toEqual([
        ['blue-admin', 'blue'],
        ['blue-hooks', 'blue'],
      ]);
      expectError(
        await as(admins.blue, '/tokens/red-hooks', { method: 'DELETE' }),
        404,
        'no active token is named "red-hooks"',
      );
      expect((await as(managers.red, '/webhooks')).status).toBe(200);
    });

    it('names ignore case across every team: a name differing only in case is taken', async () => {
      expectError(
        await grant(admins.blue, { name: 'RED-ADMIN', scopes: ['plants:read'] }),
        409,
        'a token named "RED-ADMIN" already exists or existed, ignoring case',
      );
    });

    it("caps each team's active tokens", async () => {
      // Red holds red-admin, red-hooks, red-deputy, red-reader: two more reach its cap of 6.
      for (const name of ['red-5', 'red-6']) {
        expect((await grant(admins.red, { name, scopes: ['plants:read'] })).status).toBe(201);
      }
      expectError(
        await grant(admins.red, { name: 'red-7', scopes: ['plants:read'] }),
        409,
        'team "red" holds 6 active tokens already, its limit; revoke one first',
      );
      expect((await as(admins.red, '/tokens/red-6', { method: 'DELETE' })).status).toBe(204);
      expect((await grant(admins.red, { name: 'red-7', scopes: ['plants:read'] })).status).toBe(201);
    });

    it('lets platform:admin issue for any team, unbound by the policy, and see and revoke every team’s tokens', async () => {
      const issued = await as(admins.platform, '/tokens', {
        body: '{"name": "green-admin", "team": "green", "scopes": ["tokens:manage"]}',
      });
      expect(issued.status).toBe(201);
      expect(issued.body).toMatchObject({ name: 'green-admin', team: 'green' });
      expect('expiresAt' in (issued.body as CreatedToken)).toBe(false);
      const teams = new Set(((await as(admins.platform, '/tokens')).body as Token[]).map((token) => token.team));
      // (The embedded database's first start issued its token in the team "default".)
      expect(teams).toEqual(new Set([...(engine === 'pglite' ? ['default'] : []), 'red', 'blue', 'platform', 'green']));
      expect((await as(admins.platform, '/tokens/green-admin', { method: 'DELETE' })).status).toBe(204);
    });
  });

  describe('the audit log', () => {
    it("shows each team its own events, with who, what, when and from where; platform:admin sees every team's", async () => {
      const red = ((await as(admins.red, '/audit-events?limit=200')).body as AuditEvent[]).map((event) => [
        event.action,
        event.target,
        event.actor.name,
      ]);
      expect(red).toEqual(
        expect.arrayContaining([
          ['token.issued', 'red-deputy', 'red-admin'],
          ['token.issued', 'red-reader', 'red-deputy'],
          ['token.revoked', 'red-6', 'red-admin'],
        ]),
      );
      expect(red.map(([, target]) => target)).not.toContain('blue-admin');
      const [issuedDeputy] = ((await as(admins.red, '/audit-events?limit=200')).body as AuditEvent[]).filter(
        (event) => event.target === 'red-deputy',
      );
      expect(issuedDeputy).toMatchObject({
        team: 'red',
        actor: { kind: 'token', name: 'red-admin', team: 'red' },
        clientAddress: '198.51.100.1',
        details: { scopes: ['tokens:manage', 'plants:read'] },
      });
      // Green's token, issued and revoked by the platform, is in green's log, which red cannot read.
      const all = (await as(admins.platform, '/audit-events?limit=200')).body as AuditEvent[];
      expect(all.filter((event) => event.team === 'green').map((event) => [event.action, event.actor.name])).toEqual([
        ['token.issued', 'platform'],
        ['token.revoked', 'platform'],
      ]);
      // Every team's, the command line's issues of the first tokens included.
      expect(new Set(all.map((event) => event.team))).toEqual(
        new Set([...(engine === 'pglite' ? ['default'] : []), 'red', 'blue', 'platform', 'green']),
      );
      expect(all.find((event) => event.target === 'platform')).toMatchObject({
        action: 'token.issued',
        actor: { kind: 'cli', name: 'test' },
      });
    });

    it('pages with limit, after and a Link to the next page, and needs tokens:manage', async () => {
      const first = await as(admins.red, '/audit-events?limit=2');
      const page = first.body as AuditEvent[];
      expect(page).toHaveLength(2);
      expect(first.headers.get('link')).toBe(`<?limit=2&after=${page[1]?.id}>; rel="next"`);
      const next = (await as(admins.red, `/audit-events?limit=2&after=${page[1]?.id}`)).body as AuditEvent[];
      expect(next[0]?.id).toBeGreaterThan(page[1]?.id ?? 0n);
      expectError(await as(managers.red, '/audit-events'), 403, 'this token lacks the tokens:manage scope');
      expectError(await as(admins.red, '/audit-events?limit=0'), 400);
    });
  });
});
