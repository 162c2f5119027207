import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Database, openDatabase } from '@plant-store/db';
import { createTestStorage, TEST_ACTOR, type TestStorage, testEngines, testToken } from '@plant-store/db/testing';
import type { CreatedWebhook, RotatedWebhookSecret, Webhook, WebhookDelivery } from '@plant-store/schema';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { failOnContractViolations } from '../test-support/checked-fetch.js';
import { expectError } from '../test-support/expect-error.js';
import { request } from '../test-support/test-service.js';

failOnContractViolations();

const MISSING_ID = '00000000-0000-4000-8000-000000000000';
const ALL_TYPES = ['plant.created', 'plant.updated', 'plant.deleted'];

// Event types, PATCH, secret rotation and test events over the real app and database, without a
// dispatcher: deliveries stay pending, where these tests read them. Receivers are public IP
// literals (no DNS): nothing is ever sent to them. Deliveries end to end: webhook-events-delivery.test.ts.
describe.each(testEngines())('changing webhooks on %s', (engine) => {
  let storage: TestStorage;
  let db: Database;
  let server: Server;
  let url: string;
  let manager: string;
  let otherTeam: string;
  let writer: string;

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir });
    const app = createApp({ db, bodyLimitBytes: 65_536, webhooks: { urlPolicy: { allowPrivateNetworks: false } } });
    server = app.listen(0, '127.0.0.1');
    server.keepAliveTimeout = 120_000;
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const scopes = ['webhooks:manage', 'plants:read'];
    manager = (await db.issueToken(testToken({ name: 'manager', scopes }))).token;
    otherTeam = (await db.issueToken(testToken({ name: 'blue-manager', team: 'blue', scopes }))).token;
    writer = (await db.issueToken(testToken({ name: 'writer', scopes: ['plants:read', 'plants:write'] }))).token;
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

  async function register(body: Record<string, unknown>): Promise<CreatedWebhook> {
    const response = await request(url, '/webhooks', { body: JSON.stringify(body), token: manager });
    expect(response.status).toBe(201);
    return response.body as CreatedWebhook;
  }

  const patch = (id: string, body: string, token = manager, contentType = 'application/merge-patch+json') =>
    request(url, `/webhooks/${id}`, { method: 'PATCH', body, token, contentType });

  async function auditActions(target: string): Promise<string[]> {
    const { events } = await db.listAuditEvents({ limit: 200 });
    return events.filter((event) => event.target === target).map((event) => event.action);
  }

  /** Fans every waiting event out, as a dispatcher would (this app runs none). */
  async function fanOut(): Promise<void> {
    while ((await db.fanOutEvents({ maxDeliveries: 1024 })).events > 0) {
      // Until no event waits.
    }
  }

  async function deliveriesOf(id: string): Promise<WebhookDelivery[]> {
    const response = await request(url, `/webhooks/${id}/deliveries?limit=100`, { token: manager });
    expect(response.status).toBe(200);
    return response.body as WebhookDelivery[];
  }

  describe('eventTypes', () => {
    it('are chosen at registration (default plant.created alone) and listed', async () => {
      const plain = await register({ url: 'https://8.8.8.8/plain' });
      const every = await register({ url: 'https://8.8.8.8/every', eventTypes: ALL_TYPES });
      expect(plain.eventTypes).toEqual(['plant.created']);
      expect(every.eventTypes).toEqual(ALL_TYPES);
      const listed = (await request(url, '/webhooks', { token: manager })).body as Webhook[];
      expect(listed.map((webhook) => webhook.eventTypes)).toEqual([['plant.created'], ALL_TYPES]);
    });

    it('refuses an unknown, repeated or empty choice with 400, registering nothing', async () => {
      const message =
        'eventTypes must be a non-empty array of event types without repeats: plant.created, plant.updated, plant.deleted';
      for (const eventTypes of [[], ['plant.moved'], ['plant.created', 'plant.created'], ['webhook.test']]) {
        const body = JSON.stringify({ url: 'https://8.8.8.8/hook', eventTypes });
        expectError(await request(url, '/webhooks', { body, token: manager }), 400, message);
      }
      expect(await db.listWebhooks()).toEqual([]);
    });

    it('decide which events each subscription is given a delivery of', async () => {
      const created = await register({ url: 'https://8.8.8.8/created' });
      const deleted = await register({ url: 'https://8.8.8.8/deleted', eventTypes: ['plant.deleted'] });
      const every = await register({ url: 'https://8.8.8.8/every', eventTypes: ALL_TYPES });
      const id = 9223372036854775000n;
      const plant = (body: string, method = 'POST', path = '/plants') =>
        request(url, path, { method, body, token: writer, contentType: 'application/merge-patch+json' });
      expect((await request(url, '/plants', { body: `{"id":${id},"name":"Fern"}`, token: writer })).status).toBe(200);
      expect((await plant('{"tag":"green"}', 'PATCH', `/plants/${id}`)).status).toBe(200);
      expect((await request(url, `/plants/${id}`, { method: 'DELETE', token: writer })).status).toBe(204);
      await fanOut();
      const typesOf = async (webhook: CreatedWebhook) =>
        (await deliveriesOf(webhook.id)).map((delivery) => [delivery.eventType, delivery.plantId]);
      expect(await typesOf(created)).toEqual([['plant.created', id]]);
      expect(await typesOf(deleted)).toEqual([['plant.deleted', id]]);
      expect(await typesOf(every)).toEqual([
        ['plant.created', id],
        ['plant.updated', id],
        ['plant.deleted', id],
      ]);
    });
  });

  describe('PATCH /webhooks/{id}', () => {
    it('applies a merge patch: fields left out are kept, description null removes it; audited', async () => {
      const webhook = await register({ url: 'https://8.8.8.8/a', description: 'sync' });
      const changed = await patch(
        webhook.id,
        '{"eventTypes": ["plant.updated", "plant.deleted"], "description": null}',
      );
      expect(changed.status).toBe(200);
      const { secret: _, ...listed } = webhook;
      const { description: __, ...undescribed } = listed;
      expect(changed.body).toEqual({ ...undescribed, eventTypes: ['plant.updated', 'plant.deleted'] });
      // application/json is taken too; an empty patch changes nothing and records nothing.
      const moved = await patch(webhook.id, '{"url": "https://8.8.4.4/b"}', manager, 'application/json');
      expect((moved.body as Webhook).url).toBe('https://8.8.4.4/b');
      expect(((await patch(webhook.id, '{}')).body as Webhook).url).toBe('https://8.8.4.4/b');
      expect(await auditActions(webhook.id)).toEqual(['webhook.created', 'webhook.updated', 'webhook.updated']);
      const { events } = await db.listAuditEvents({ limit: 200 });
      expect(events.find((event) => event.action === 'webhook.updated')).toMatchObject({
        actor: { kind: 'token', name: 'manager' },
        details: { eventTypes: ['plant.updated', 'plant.deleted'], description: null },
      });
    });

    it('disables and enables: the reason and time shown while disabled, both audited', async () => {
      const webhook = await register({ url: 'https://8.8.8.8/a' });
      const before = Date.now();
      const disabled = (await patch(webhook.id, '{"enabled": false}')).body as Webhook;
      expect(disabled).toMatchObject({ enabled: false, disabledReason: 'disabled by its owner (token manager)' });
      expect(Date.parse(disabled.disabledAt ?? '')).toBeGreaterThanOrEqual(before - 1000);
      // Disabled again: nothing changes, nothing recorded.
      expect(((await patch(webhook.id, '{"enabled": false}')).body as Webhook).disabledAt).toBe(disabled.disabledAt);
      const enabled = (await patch(webhook.id, '{"enabled": true}')).body as Webhook;
      expect(enabled.enabled).toBe(true);
      expect('disabledReason' in enabled || 'disabledAt' in enabled).toBe(false);
      expect(await auditActions(webhook.id)).toEqual(['webhook.created', 'webhook.disabled', 'webhook.enabled']);
    });

    it('gives a disabled subscription no deliveries of what happens meanwhile', async () => {
      const webhook = await register({ url: 'https://8.8.8.8/a' });
      await patch(webhook.id, '{"enabled": false}');
      expect((await request(url, '/plants', { body: '{"id":77,"name":"Unseen"}', token: writer })).status).toBe(200);
      await fanOut();
      await patch(webhook.id, '{"enabled": true}');
      expect((await request(url, '/plants', { body: '{"id":78,"name":"Seen"}', token: writer })).status).toBe(200);
      await fanOut();
      expect((await deliveriesOf(webhook.id)).map((delivery) => delivery.plantId)).toEqual([78n]);
    });

    it.each([
      ['enabled null', '{"enabled": null}', /^enabled must be true or false$/],
      ['url null', '{"url": null}', /^url must be a string/],
      ['an unknown type', '{"eventTypes": ["plant.moved"]}', /^eventTypes must be a non-empty array/],
      ['no types', '{"eventTypes": []}', /^eventTypes must be a non-empty array/],
      ['a private address', '{"url": "http://127.0.0.1/hook"}', /^url host 127\.0\.0\.1 is not a public address/],
      ['not an object', '[]', /^request body must be a JSON object$/],
    ])('refuses %s with 400 and changes nothing', async (_label, body, message) => {
      const webhook = await register({ url: 'https://8.8.8.8/a' });
      expectError(await patch(webhook.id, body), 400, message);
      const [listed] = await db.listWebhooks();
      expect(listed).toMatchObject({ url: 'https://8.8.8.8/a', eventTypes: ['plant.created'], enabled: true });
    });
  });

  describe('POST /webhooks/{id}/secret', () => {
    it('answers a new secret; the previous one signs for 24 h by default, or as long as asked; audited', async () => {
      const webhook = await register({ url: 'https://8.8.8.8/a' });
      const before = Date.now();
      // No body at all: the default grace period.
      const rotated = await request(url, `/webhooks/${webhook.id}/secret`, { method: 'POST', token: manager });
      expect(rotated.status).toBe(200);
      const { secret, previousSecretExpiresAt } = rotated.body as RotatedWebhookSecret;
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(secret).not.toBe(webhook.secret);
      const expires = Date.parse(previousSecretExpiresAt ?? '');
      expect(expires).toBeGreaterThanOrEqual(before + 86_400_000 - 5_000);
      expect(expires).toBeLessThanOrEqual(Date.now() + 86_400_000 + 5_000);
      const [listed] = (await request(url, '/webhooks', { token: manager })).body as Webhook[];
      expect(listed?.previousSecretExpiresAt).toBe(previousSecretExpiresAt);
      expect(JSON.stringify(listed)).not.toContain('whsec_');

      const hour = await request(url, `/webhooks/${webhook.id}/secret`, {
        body: '{"gracePeriodSeconds": 3600}',
        token: manager,
      });
      const hourExpires = Date.parse((hour.body as RotatedWebhookSecret).previousSecretExpiresAt ?? '');
      expect(hourExpires).toBeLessThanOrEqual(Date.now() + 3_600_000 + 5_000);
      const now = await request(url, `/webhooks/${webhook.id}/secret`, {
        body: '{"gracePeriodSeconds": 0}',
        token: manager,
      });
      expect(Object.keys(now.body as object)).toEqual(['secret']);
      const [afterwards] = (await request(url, '/webhooks', { token: manager })).body as Webhook[];
      expect(afterwards && 'previousSecretExpiresAt' in afterwards).toBe(false);
      expect(await auditActions(webhook.id)).toEqual([
        'webhook.created',
        'webhook.secret_rotated',
        'webhook.secret_rotated',
        'webhook.secret_rotated',
      ]);
    });

    it('refuses a grace period out of range with 400', async () => {
      const webhook = await register({ url: 'https://8.8.8.8/a' });
      for (const grace of [-1, 604_801, 1.5, '60']) {
        expectError(
          await request(url, `/webhooks/${webhook.id}/secret`, {
            body: JSON.stringify({ gracePeriodSeconds: grace }),
            token: manager,
          }),
          400,
          /^gracePeriodSeconds must be an integer between 0 and 604800$/,
        );
      }
    });
  });

  describe('POST /webhooks/{id}/test', () => {
    it('queues a webhook.test delivery, about no plant, shown in the log; audited', async () => {
      const webhook = await register({ url: 'https://8.8.8.8/a', eventTypes: ['plant.deleted'] });
      const response = await request(url, `/webhooks/${webhook.id}/test`, { method: 'POST', token: manager });
      expect(response.status).toBe(202);
      const delivery = response.body as WebhookDelivery;
      expect(delivery).toMatchObject({
        webhookId: webhook.id,
        eventType: 'webhook.test',
        plantId: 0n,
        status: 'pending',
      });
      expect(delivery.attempts).toEqual([]);
      expect(await deliveriesOf(webhook.id)).toEqual([delivery]);
      expect(await auditActions(webhook.id)).toEqual(['webhook.created', 'webhook.tested']);
      // Never in the feed: it is about no plant.
      const feed = await request(url, '/events?limit=1000', { token: writer });
      expect(feed.text).not.toContain('webhook.test');
    });
  });

  describe("another team's subscription, or none", () => {
    it.each([
      ['PATCH', '', '{"enabled": false}'],
      ['POST', '/secret', '{}'],
      ['POST', '/test', undefined],
    ])('%s /webhooks/{id}%s answers 404 and changes nothing', async (method, suffix, body) => {
      const webhook = await register({ url: 'https://8.8.8.8/a' });
      for (const [id, token] of [
        [webhook.id, otherTeam],
        [MISSING_ID, manager],
        ['not-a-uuid', manager],
      ] as const) {
        const answer = await request(url, `/webhooks/${id}${suffix}`, {
          method,
          token,
          ...(body === undefined ? {} : { body, contentType: 'application/json' }),
        });
        expect(answer.status).toBe(404);
      }
      const [listed] = await db.listWebhooks();
      expect(listed).toMatchObject({ enabled: true, previousSecretExpiresAt: null });
      expect(await deliveriesOf(webhook.id)).toEqual([]);
      expect(await auditActions(webhook.id)).toEqual(['webhook.created']);
    });

    it('needs webhooks:manage', async () => {
      const webhook = await register({ url: 'https://8.8.8.8/a' });
      expectError(await patch(webhook.id, '{"enabled": false}', writer), 403, /webhooks:manage/);
      expectError(
        await request(url, `/webhooks/${webhook.id}/test`, { method: 'POST', token: writer }),
        403,
        /webhooks:manage/,
      );
    });

    // Its events carry plants: moving them to another URL, or asking for more of them, would hand a
    // token without plants:read the plants it may not read.
    it('needs plants:read as well, as registration does', async () => {
      const webhook = await register({ url: 'https://8.8.8.8/a' });
      const managerOnly = (await db.issueToken(testToken({ name: 'manager-only', scopes: ['webhooks:manage'] }))).token;
      for (const body of [
        '{"url": "https://8.8.4.4/mine"}',
        '{"eventTypes": ["plant.updated"]}',
        '{"enabled": false}',
      ]) {
        expectError(await patch(webhook.id, body, managerOnly), 403, /plants:read/);
      }
      const [listed] = await db.listWebhooks();
      expect(listed).toMatchObject({ url: 'https://8.8.8.8/a', eventTypes: ['plant.created'], enabled: true });
      expect(await auditActions(webhook.id)).toEqual(['webhook.created']);
    });
  });
});
