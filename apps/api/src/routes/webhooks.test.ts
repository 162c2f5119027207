import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPlantStoreClient, type PlantStoreClient, PlantStoreError } from '@plant-store/client';
import { type Database, openDatabase, WebhookLimitError } from '@plant-store/db';
import { createTestStorage, TEST_ACTOR, type TestStorage, testEngines, testToken } from '@plant-store/db/testing';
import { type CreatedWebhook, isRfc3339DateTime, type WebhookDelivery } from '@plant-store/schema';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { checkedFetch, failOnContractViolations } from '../test-support/checked-fetch.js';
import { expectError } from '../test-support/expect-error.js';
import { request } from '../test-support/test-service.js';

failOnContractViolations();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MISSING_ID = '00000000-0000-4000-8000-000000000000';

// The real app on a real port over a real database, as server.ts wires it, but without the
// webhook dispatcher: deliveries stay pending, where these tests read them. Receivers are public
// IP literals (no DNS): nothing is ever sent to them.
describe.each(testEngines())('the webhook routes on %s', (engine) => {
  let storage: TestStorage;
  let db: Database;
  let server: Server;
  let url: string;
  let manager: string;
  let plantsOnly: string;
  let client: PlantStoreClient;

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir });
    const app = createApp({ db, bodyLimitBytes: 65_536, webhooks: { urlPolicy: { allowPrivateNetworks: false } } });
    server = app.listen(0, '127.0.0.1');
    // Longer than any pause between these tests: a pooled connection the server closed while idle,
    // reused for the next POST at that moment, fails with ECONNRESET (a keep-alive race, not the
    // service's fault, and a POST is not retried).
    server.keepAliveTimeout = 120_000;
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    manager = (await db.issueToken(testToken({ name: 'manager', scopes: ['webhooks:manage', 'plants:read'] }))).token;
    plantsOnly = (await db.issueToken(testToken({ name: 'plants', scopes: ['plants:read', 'plants:write'] }))).token;
    client = createPlantStoreClient({ baseUrl: url, token: manager, fetch: checkedFetch, retry: { attempts: 1 } });
  });
  afterEach(async () => {
    for (const webhook of await db.listWebhooks()) await db.deleteWebhook(webhook.id, { actor: TEST_ACTOR });
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    await db?.close();
    await storage?.dispose();
  });

  const register = (body: string, token = manager) => request(url, '/webhooks', { body, token });

  /** Creates a plant, then fans its event out as a dispatcher would (this app runs none). */
  async function createPlant(id: bigint, name = `plant ${id}`): Promise<void> {
    const response = await request(url, '/plants', { body: `{"id": ${id}, "name": "${name}"}`, token: plantsOnly });
    expect(response.status).toBe(200);
    while ((await db.fanOutEvents({ maxDeliveries: 1024 })).events > 0) {
      // Until no event waits.
    }
  }

  describe('POST /webhooks', () => {
    it('answers 201 with the subscription and its secret, shown this once only', async () => {
      const before = Date.now();
      const response = await register(
        '{"url": "https://8.8.8.8/hooks/plants", "description": "Inventory sync", "secret": "mine", "id": 1}',
      );
      expect(response.status).toBe(201);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const created = response.body as CreatedWebhook;
      expect(Object.keys(created)).toEqual([
        'id',
        'url',
        'description',
        'team',
        'createdAt',
        'eventTypes',
        'enabled',
        'secret',
      ]);
      expect(created).toMatchObject({ eventTypes: ['plant.created'], enabled: true });
      expect(created.team).toBe('default');
      expect(created).toMatchObject({ url: 'https://8.8.8.8/hooks/plants', description: 'Inventory sync' });
      expect(created.id).toMatch(UUID);
      expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(isRfc3339DateTime(created.createdAt)).toBe(true);
      expect(Date.parse(created.createdAt)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(created.createdAt)).toBeLessThanOrEqual(Date.now() + 1000);

      const listed = await request(url, '/webhooks', { token: manager });
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual([
        {
          id: created.id,
          url: created.url,
          description: 'Inventory sync',
          team: 'default',
          createdAt: created.createdAt,
          eventTypes: ['plant.created'],
          enabled: true,
        },
      ]);
      expect(listed.text).not.toContain('secret');
      expect(listed.text).not.toContain(created.secret);
    });

    it('gives every subscription its own id and secret, lists them oldest first, leaves an absent description out', async () => {
      const first = await client.createWebhook({ url: 'https://8.8.8.8/a' });
      const second = await client.createWebhook({ url: 'http://[2001:4860:4860::8888]:8080/b', description: '' });
      expect(first.id).not.toBe(second.id);
      expect(first.secret).not.toBe(second.secret);
      expect('description' in first).toBe(false);
      const listed = await request(url, '/webhooks', { token: manager });
      const tail = '"eventTypes":["plant.created"],"enabled":true}';
      expect(listed.text).toBe(
        `[{"id":"${first.id}","url":"https://8.8.8.8/a","team":"default","createdAt":"${first.createdAt}",${tail},` +
          `{"id":"${second.id}","url":"http://[2001:4860:4860::8888]:8080/b","description":"","team":"default","createdAt":"${second.createdAt}",${tail}]`,
      );
      const defaults = { eventTypes: ['plant.created'], enabled: true };
      expect(await client.listWebhooks()).toEqual([
        { id: first.id, url: first.url, team: 'default', createdAt: first.createdAt, ...defaults },
        { id: second.id, url: second.url, description: '', team: 'default', createdAt: second.createdAt, ...defaults },
      ]);
    });

    it.each([
      ['ftp:', 'ftp://8.8.8.8/hooks', /^url must be an absolute http:\/\/ or https:\/\/ URL$/],
      ['a relative URL', '/hooks', /^url must be an absolute http:\/\/ or https:\/\/ URL$/],
      ['credentials', 'https://user:secret@8.8.8.8/hooks', /^url must not contain credentials \(user:password@\)$/],
      ['a fragment', 'https://8.8.8.8/hooks#top', /^url must not contain a fragment/],
      ['a space', 'https://8.8.8.8/a b', /^url must not contain spaces, control characters/],
      [
        '2049 characters',
        `https://8.8.8.8/${'a'.repeat(2049 - 16)}`,
        /^url must be a string of at most 2048 characters$/,
      ],
      [
        '127.0.0.1',
        'http://127.0.0.1:3000/hooks',
        /^url host 127\.0\.0\.1 is not a public address \(loopback\); webhooks are only sent to public addresses unless the service runs with WEBHOOKS_ALLOW_PRIVATE_NETWORKS=true$/,
      ],
      [
        'localhost (resolved)',
        'http://localhost/hooks',
        /^url host localhost resolves to an address that is not public; webhooks are only sent to public addresses unless the service runs with WEBHOOKS_ALLOW_PRIVATE_NETWORKS=true$/,
      ],
      ['[::1]', 'http://[::1]/hooks', /is not a public address \(loopback\)/],
      ['an IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/hooks', /is not a public address \(loopback\)/],
      ['10.0.0.1', 'https://10.0.0.1/hooks', /is not a public address \(private\)/],
      ['the cloud metadata address', 'http://169.254.169.254/latest', /is not a public address \(linkLocal\)/],
      ['CGNAT', 'https://100.64.0.1/hooks', /is not a public address \(carrierGradeNat\)/],
      ['0.0.0.0', 'http://0.0.0.0/hooks', /is not a public address/],
    ])('refuses %s with 400 and a message naming the rule, registering nothing', async (_label, hook, message) => {
      expectError(await register(JSON.stringify({ url: hook })), 400, message);
      expect(await db.listWebhooks()).toEqual([]);
    });

    it.each([
      ['no url', '{"description": "x"}', /^url is required$/],
      ['a null url', '{"url": null}', /^url must be a string of at most 2048 characters$/],
      [
        'a long description',
        `{"url": "https://8.8.8.8/", "description": "${'d'.repeat(256)}"}`,
        /^description must be/,
      ],
      ['a JSON array', '[]', /^request body must be a JSON object$/],
      ['broken JSON', '{"url": ', /^request body is not valid JSON/],
      [
        'nesting deeper than the limit',
        `{"url": "https://8.8.8.8/", "extra": ${'['.repeat(30_000)}${']'.repeat(30_000)}}`,
        /^request body is nested too deep: at most 64 levels of arrays and objects$/,
      ],
    ])('refuses a body with %s with 400', async (_label, body, message) => {
      expectError(await register(body), 400, message);
    });

    it('refuses a body that is not JSON with 415 and one over the limit with 413', async () => {
      expectError(
        await request(url, '/webhooks', { body: 'url=x', contentType: 'text/plain', token: manager }),
        415,
        'request body must be JSON sent as Content-Type: application/json',
      );
      expectError(
        await register(`{"url": "https://8.8.8.8/", "pad": "${'p'.repeat(70_000)}"}`),
        413,
        /larger than the limit of 65536 bytes/,
      );
    });

    it('registers at most 100 webhooks: the 101st is a 409, and deleting one makes room', async () => {
      for (let index = 0; index < 100; index++) {
        expect((await register(`{"url": "https://8.8.8.8/hook/${index}"}`)).status).toBe(201);
      }
      expectError(
        await register('{"url": "https://8.8.8.8/one-too-many"}'),
        409,
        new WebhookLimitError(100, 'default').message,
      );
      const error = await client.createWebhook({ url: 'https://8.8.8.8/again' }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(PlantStoreError);
      expect(error).toMatchObject({ status: 409, error: 409 });
      const listed = await client.listWebhooks();
      expect(listed).toHaveLength(100);
      await client.deleteWebhook(listed[0]?.id ?? '');
      expect((await register('{"url": "https://8.8.8.8/room"}')).status).toBe(201);
    }, 120_000);
  });

  describe('DELETE /webhooks/{id}', () => {
    it('answers 204, then the webhook is gone and a second delete answers 404', async () => {
      const kept = await client.createWebhook({ url: 'https://8.8.8.8/kept' });
      const removed = await client.createWebhook({ url: 'https://8.8.8.8/removed' });
      const response = await request(url, `/webhooks/${removed.id}`, { method: 'DELETE', token: manager });
      expect(response.status).toBe(204);
      expect(response.text).toBe('');
      expect((await client.listWebhooks()).map((webhook) => webhook.id)).toEqual([kept.id]);
      expectError(
        await request(url, `/webhooks/${removed.id}`, { method: 'DELETE', token: manager }),
        404,
        `no webhook with id ${removed.id}`,
      );
      const again = await client.deleteWebhook(removed.id).catch((caught: unknown) => caught);
      expect(again).toMatchObject({ status: 404, error: 404 });
    });

    it.each([MISSING_ID, '1', 'not-a-uuid', `${MISSING_ID}0`, '%00'])('answers 404 for the id %s', async (id) => {
      const response = await request(url, `/webhooks/${id}`, { method: 'DELETE', token: manager });
      expectError(response, 404, /^no webhook (with id|has this id)/);
    });
  });

  describe('deliveries', () => {
    it('records one pending delivery per subscription for each plant created, with the same event id', async () => {
      const first = await client.createWebhook({ url: 'https://8.8.8.8/first' });
      const second = await client.createWebhook({ url: 'https://8.8.8.8/second' });
      await createPlant(9007199254740993n, 'Monstera');

      const response = await request(url, `/webhooks/${first.id}/deliveries`, { token: manager });
      expect(response.status).toBe(200);
      expect(response.headers.get('link')).toBeNull();
      expect(response.text).toContain('"plantId":9007199254740993,');
      const [delivery] = response.body as WebhookDelivery[];
      expect(response.body).toHaveLength(1);
      expect(delivery).toMatchObject({
        webhookId: first.id,
        plantId: 9007199254740993n,
        status: 'pending',
        attempts: [],
      });
      expect(delivery?.eventId).toMatch(/^msg_[0-9a-f-]{36}$/);
      expect(isRfc3339DateTime(delivery?.createdAt ?? '')).toBe(true);
      expect(isRfc3339DateTime(delivery?.nextAttemptAt ?? '')).toBe(true);
      expect(delivery).not.toHaveProperty('deliveredAt');

      const { deliveries: others } = await client.listWebhookDeliveries(second.id);
      expect(others).toHaveLength(1);
      expect(others[0]?.eventId).toBe(delivery?.eventId);
      expect(others[0]?.id).not.toBe(delivery?.id);
    });

    it('records nothing for a replayed create, nor for subscriptions registered after the plant', async () => {
      const early = await client.createWebhook({ url: 'https://8.8.8.8/early' });
      const response = await request(url, '/plants', { body: '{"id": 77, "name": "Fern"}', token: plantsOnly });
      expect(response.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 10));
      // Registered after the plant was created, before its event was fanned out: it gets none.
      const late = await client.createWebhook({ url: 'https://8.8.8.8/late' });
      await createPlant(77n, 'Fern');
      expect((await client.listWebhookDeliveries(early.id)).deliveries.map((delivery) => delivery.plantId)).toEqual([
        77n,
      ]);
      expect((await client.listWebhookDeliveries(late.id)).deliveries).toEqual([]);
    });

    it('pages in ascending id order with a Link to the next page, as GET /plants does', async () => {
      const webhook = await client.createWebhook({ url: 'https://8.8.8.8/paged' });
      for (const id of [101n, 102n, 103n, 104n, 105n]) await createPlant(id);

      const all: WebhookDelivery[] = [];
      for await (const delivery of client.webhookDeliveries(webhook.id, { pageSize: 2 })) all.push(delivery);
      expect(all.map((delivery) => delivery.plantId)).toEqual([101n, 102n, 103n, 104n, 105n]);
      const ids = all.map((delivery) => delivery.id);
      expect([...ids].sort((a, b) => (a < b ? -1 : 1))).toEqual(ids);

      const path = `/webhooks/${webhook.id}/deliveries`;
      const first = await request(url, `${path}?limit=2`, { token: manager });
      expect(first.headers.get('link')).toBe(`<?limit=2&after=${ids[1]}>; rel="next"`);
      const last = await request(url, `${path}?limit=2&after=${ids[3]}`, { token: manager });
      expect((last.body as WebhookDelivery[]).map((delivery) => delivery.id)).toEqual([ids[4]]);
      expect(last.headers.get('link')).toBeNull();
      const exact = await request(url, `${path}?limit=5`, { token: manager });
      expect(exact.headers.get('link')).toBeNull();
      expect(exact.body).toHaveLength(5);
      expect((await request(url, `${path}?after=${ids[4]}`, { token: manager })).text).toBe('[]');
    });

    it.each([
      ['limit=0', /^limit must be an integer between 1 and 100$/],
      ['limit=101', /^limit must be an integer between 1 and 100$/],
      ['limit=abc', /^limit must be/],
      ['after=abc', /^after must be an integer between -9223372036854775808 and 9223372036854775807$/],
      ['after=9223372036854775808', /^after must be an integer/],
      ['limit=1&limit=2', /^query parameter limit must be given at most once$/],
      ['after=%', /^query parameter after is not valid percent-encoded UTF-8$/],
    ])('refuses the query %s with 400', async (query, message) => {
      const webhook = await client.createWebhook({ url: 'https://8.8.8.8/query' });
      expectError(await request(url, `/webhooks/${webhook.id}/deliveries?${query}`, { token: manager }), 400, message);
    });

    it('answers 404 for an unknown webhook, an id that is not a UUID, and a deleted webhook', async () => {
      expectError(await request(url, `/webhooks/${MISSING_ID}/deliveries`, { token: manager }), 404);
      expectError(await request(url, '/webhooks/42/deliveries', { token: manager }), 404);
      const webhook = await client.createWebhook({ url: 'https://8.8.8.8/deleted' });
      await createPlant(201n);
      await client.deleteWebhook(webhook.id);
      expectError(
        await request(url, `/webhooks/${webhook.id}/deliveries`, { token: manager }),
        404,
        `no webhook with id ${webhook.id}`,
      );
    });

    it('resends a delivery: 202 with it, pending and due now, its attempts kept', async () => {
      const webhook = await client.createWebhook({ url: 'https://8.8.8.8/resend' });
      await createPlant(301n);
      const [delivery] = (await client.listWebhookDeliveries(webhook.id)).deliveries;
      if (!delivery) throw new Error('no delivery recorded');

      const before = Date.now();
      const response = await request(url, `/webhooks/${webhook.id}/deliveries/${delivery.id}/resend`, {
        method: 'POST',
        token: manager,
      });
      expect(response.status).toBe(202);
      const resent = response.body as WebhookDelivery;
      expect(resent).toMatchObject({ id: delivery.id, eventId: delivery.eventId, status: 'pending', attempts: [] });
      expect(Date.parse(resent.nextAttemptAt ?? '')).toBeLessThanOrEqual(Date.now() + 1000);
      expect(Date.parse(resent.nextAttemptAt ?? '')).toBeGreaterThanOrEqual(before - 5000);
      expect(await client.resendWebhookDelivery(webhook.id, delivery.id)).toMatchObject({ id: delivery.id });
    });

    it("answers 404 for a delivery that is not this webhook's, and 400 for a deliveryId that is not an int64", async () => {
      const mine = await client.createWebhook({ url: 'https://8.8.8.8/mine' });
      const other = await client.createWebhook({ url: 'https://8.8.8.8/other' });
      await createPlant(401n);
      const [theirs] = (await client.listWebhookDeliveries(other.id)).deliveries;
      const resend = (webhookId: string, deliveryId: string) =>
        request(url, `/webhooks/${webhookId}/deliveries/${deliveryId}/resend`, { method: 'POST', token: manager });
      expectError(
        await resend(mine.id, String(theirs?.id)),
        404,
        `webhook ${mine.id} has no delivery with id ${theirs?.id}`,
      );
      expectError(await resend(mine.id, '9223372036854775807'), 404);
      expectError(await resend(MISSING_ID, String(theirs?.id)), 404);
      expectError(await resend('nope', String(theirs?.id)), 404);
      expectError(
        await resend(mine.id, 'abc'),
        400,
        /^deliveryId must be an integer between -9223372036854775808 and 9223372036854775807$/,
      );
      const error = await client.resendWebhookDelivery(mine.id, 1n << 40n).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ status: 404, error: 404 });
    });
  });

  describe('the webhooks:manage scope', () => {
    // Creating one needs plants:read as well: its events carry plants.
    const operations = (id: string) =>
      [
        ['POST', '/webhooks', '{"url": "https://8.8.8.8/"}', 'webhooks:manage plants:read'],
        ['GET', '/webhooks', undefined, 'webhooks:manage'],
        ['DELETE', `/webhooks/${id}`, undefined, 'webhooks:manage'],
        ['GET', `/webhooks/${id}/deliveries`, undefined, 'webhooks:manage'],
        ['POST', `/webhooks/${id}/deliveries/1/resend`, undefined, 'webhooks:manage'],
      ] as const;

    it('is required by every operation: 403 naming it for a plants token, 401 without a valid token', async () => {
      const webhook = await client.createWebhook({ url: 'https://8.8.8.8/guarded' });
      for (const [method, path, body, scopes] of operations(webhook.id)) {
        const withBody = body === undefined ? {} : { body };
        const forbidden = await request(url, path, { method, token: plantsOnly, ...withBody });
        expectError(forbidden, 403, 'this token lacks the webhooks:manage scope');
        expect(forbidden.headers.get('www-authenticate')).toBe(
          `Bearer realm="plant-store", error="insufficient_scope", scope="${scopes}"`,
        );
        const anonymous = await request(url, path, { method, ...withBody });
        expectError(anonymous, 401, 'authentication required: send Authorization: Bearer <token>');
        expectError(await request(url, path, { method, token: 'pst_unknown', ...withBody }), 401);
      }
      expect((await db.listWebhooks()).map((listed) => listed.id)).toEqual([webhook.id]);
    });

    it('is not enough to subscribe: its events carry plants, so plants:read is needed too', async () => {
      const webhooksOnly = (await db.issueToken(testToken({ name: 'webhooks-only', scopes: ['webhooks:manage'] })))
        .token;
      const refused = await request(url, '/webhooks', { body: '{"url": "https://8.8.8.8/peek"}', token: webhooksOnly });
      expectError(refused, 403, 'this token lacks the plants:read scope');
      expect(refused.headers.get('www-authenticate')).toBe(
        'Bearer realm="plant-store", error="insufficient_scope", scope="webhooks:manage plants:read"',
      );
      expect((await request(url, '/webhooks', { token: webhooksOnly })).status).toBe(200);
      expect((await db.listWebhooks()).map((listed) => listed.url)).not.toContain('https://8.8.8.8/peek');
    });

    it('is not needed for the plants: a webhooks:manage token cannot create plants', async () => {
      expectError(
        await request(url, '/plants', { body: '{"id": 1, "name": "x"}', token: manager }),
        403,
        'this token lacks the plants:write scope',
      );
    });
  });
});
