import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPlantStoreClient, type PlantStoreClient } from '@plant-store/client';
import { type Database, openDatabase } from '@plant-store/db';
import { createTestStorage, TEST_ACTOR, type TestStorage, testEngines, testToken } from '@plant-store/db/testing';
import type { ResentDeliveries, WebhookDelivery } from '@plant-store/schema';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { checkedFetch, failOnContractViolations } from '../test-support/checked-fetch.js';
import { expectError } from '../test-support/expect-error.js';
import { request } from '../test-support/test-service.js';
import { readServiceVersion } from './version.js';

failOnContractViolations();

const MISSING_ID = '00000000-0000-4000-8000-000000000000';

// What a team needs to sort out failing deliveries: the status filter, the receiver's answer kept
// with each attempt, resending many at once; and the service's version. The real app on a real
// port without the dispatcher: attempts are recorded here as a dispatcher records them.
describe.each(testEngines())('triaging deliveries on %s', (engine) => {
  let storage: TestStorage;
  let db: Database;
  let server: Server;
  let url: string;
  let manager: string;
  let outsider: string;
  let plantsOnly: string;
  let client: PlantStoreClient;

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir });
    server = createApp({ db, bodyLimitBytes: 65_536 }).listen(0, '127.0.0.1');
    server.keepAliveTimeout = 120_000;
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const scopes = ['webhooks:manage', 'plants:read'] as const;
    manager = (await db.issueToken(testToken({ name: 'manager', scopes: [...scopes, 'tokens:manage'] }))).token;
    outsider = (await db.issueToken(testToken({ name: 'outsider', team: 'other', scopes: [...scopes] }))).token;
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

  /** Creates plants, then fans their events out as a dispatcher would. */
  async function createPlants(...ids: bigint[]): Promise<void> {
    for (const id of ids) {
      const response = await request(url, '/plants', {
        body: `{"id": ${id}, "name": "plant ${id}"}`,
        token: plantsOnly,
      });
      expect(response.status).toBe(200);
    }
    while ((await db.fanOutEvents({ maxDeliveries: 1024 })).events > 0) {
      // Until no event waits.
    }
  }

  /** Claims every due delivery and records one attempt for each: failed for good unless `delivered`. */
  async function attemptAll(delivered: (plantId: bigint) => boolean, responseExcerpt: string | null) {
    const claims = await db.claimDeliveries({ limit: 100, perWebhookLimit: 100, leaseMs: 30_000 });
    for (const claim of claims) {
      // The plant's id, from the body as sent (a claim carries no plant id of its own).
      const ok = delivered(BigInt(/"id":(\d+)/.exec(claim.payload)?.[1] ?? '-1'));
      const outcome = {
        attemptedAt: new Date(),
        statusCode: ok ? 200 : 503,
        latencyMs: 12,
        error: ok ? null : 'HTTP 503',
        responseExcerpt,
        delivered: ok,
        retryAt: null,
      };
      expect(await db.recordAttempt(claim, outcome)).toBe(true);
    }
    return claims.length;
  }

  const statuses = (deliveries: readonly WebhookDelivery[]) => deliveries.map((d) => [d.plantId, d.status]);

  describe('GET /webhooks/{id}/deliveries?status=', () => {
    it('lists only the deliveries with that status, paged with the filter kept, attempts with their excerpt', async () => {
      const webhook = await client.createWebhook({ url: 'https://8.8.8.8/filter' });
      await createPlants(11n, 12n, 13n, 14n);
      expect(await attemptAll((id) => id === 12n, 'maintenance: back at 11:30')).toBe(4);
      await createPlants(15n);

      const failed = await client.listWebhookDeliveries(webhook.id, { status: 'failed', limit: 2 });
      expect(statuses(failed.deliveries)).toEqual([
        [11n, 'failed'],
        [13n, 'failed'],
      ]);
      expect(failed.deliveries[0]?.attempts).toEqual([
        expect.objectContaining({ statusCode: 503, error: 'HTTP 503', responseExcerpt: 'maintenance: back at 11:30' }),
      ]);
      expect(failed.next).toMatchObject({ status: 'failed', limit: 2 });
      const response = await request(url, `/webhooks/${webhook.id}/deliveries?status=failed&limit=2`, {
        token: manager,
      });
      expect(response.headers.get('link')).toMatch(/[?&]status=failed(&|>)/);
      const rest = await client.listWebhookDeliveries(webhook.id, failed.next ?? {});
      expect(statuses(rest.deliveries)).toEqual([[14n, 'failed']]);
      expect(rest.next).toBeNull();

      expect(statuses((await client.listWebhookDeliveries(webhook.id, { status: 'delivered' })).deliveries)).toEqual([
        [12n, 'delivered'],
      ]);
      const pending = (await client.listWebhookDeliveries(webhook.id, { status: 'pending' })).deliveries;
      expect(pending.map((d) => [d.plantId, d.attempts])).toEqual([[15n, []]]);
    });

    it('refuses an unknown status with 400, and answers 404 for an unknown webhook whatever the filter', async () => {
      const webhook = await client.createWebhook({ url: 'https://8.8.8.8/refuse' });
      expectError(
        await request(url, `/webhooks/${webhook.id}/deliveries?status=lost`, { token: manager }),
        400,
        'status must be one of pending, delivered, failed',
      );
      expectError(await request(url, `/webhooks/${MISSING_ID}/deliveries?status=failed`, { token: manager }), 404);
    });

    it('leaves the excerpt out of attempts that kept none', async () => {
      const webhook = await client.createWebhook({ url: 'https://8.8.8.8/none' });
      await createPlants(21n);
      await attemptAll(() => false, null);
      const [delivery] = (await client.listWebhookDeliveries(webhook.id)).deliveries;
      expect(delivery?.attempts[0]).not.toHaveProperty('responseExcerpt');
    });

    it('keeps the excerpt exactly: any character but NUL, which PostgreSQL text cannot hold, shown as U+FFFD', async () => {
      const webhook = await client.createWebhook({ url: 'https://8.8.8.8/exact' });
      await createPlants(31n);
      await attemptAll(() => false, '<p>café 🌵 "\\u0000"</p>\n\u0000\t');
      const [delivery] = (await client.listWebhookDeliveries(webhook.id)).deliveries;
      expect(delivery?.attempts[0]?.responseExcerpt).toBe('<p>café 🌵 "\\u0000"</p>\n\uFFFD\t');
    });
  });

  describe('POST /webhooks/{id}/deliveries/resend', () => {
    const resend = (webhookId: string, body: string, token = manager) =>
      request(url, `/webhooks/${webhookId}/deliveries/resend`, { body, token });

    it('queues every failed delivery again, pending and due now, attempts kept, each in the audit log', async () => {
      const webhook = await client.createWebhook({ url: 'https://8.8.8.8/all' });
      await createPlants(41n, 42n, 43n);
      await attemptAll((id) => id === 42n, 'nope');
      const failedIds = (await client.listWebhookDeliveries(webhook.id, { status: 'failed' })).deliveries.map(
        (d) => d.id,
      );
      expect(failedIds).toHaveLength(2);

      const response = await resend(webhook.id, '{}');
      expect(response.status).toBe(202);
      // (The test's reader keeps every JSON integer exact: a bigint.)
      expect(response.body).toEqual({ resent: 2n, deliveryIds: failedIds, hasMore: false });
      const listed = (await client.listWebhookDeliveries(webhook.id)).deliveries;
      expect(listed.map((d) => [d.plantId, d.status, d.attempts.length])).toEqual([
        [41n, 'pending', 1],
        [42n, 'delivered', 1],
        [43n, 'pending', 1],
      ]);
      for (const delivery of listed.filter((d) => d.status === 'pending')) {
        expect(Date.parse(delivery.nextAttemptAt ?? '')).toBeLessThanOrEqual(Date.now() + 1000);
      }
      const audit = (await db.listAuditEvents({ limit: 100 })).events.filter(
        (event) => event.action === 'webhook.delivery_resent',
      );
      expect(audit.map((event) => [event.target, event.details, event.actor.name])).toEqual(
        failedIds.map((id) => [String(id), { webhookId: webhook.id }, 'manager']),
      );
      // Nothing failed any more: a second call queues nothing.
      expect(await client.resendWebhookDeliveries(webhook.id)).toEqual({ resent: 0, deliveryIds: [], hasMore: false });
    });

    it('keeps to the range and the bound: ids after/through, creation instants, a status, at most limit', async () => {
      const webhook = await client.createWebhook({ url: 'https://8.8.8.8/range' });
      await createPlants(51n, 52n, 53n, 54n, 55n);
      await attemptAll(() => false, null);
      const ids = (await client.listWebhookDeliveries(webhook.id)).deliveries.map((d) => d.id);
      const [first, second, third, fourth] = ids as [bigint, bigint, bigint, bigint, bigint];

      const ranged = await client.resendWebhookDeliveries(webhook.id, { after: first, through: fourth, limit: 2 });
      expect(ranged).toEqual({ resent: 2, deliveryIds: [second, third], hasMore: true });
      const onward = await client.resendWebhookDeliveries(webhook.id, { after: third, through: fourth });
      expect(onward).toEqual({ resent: 1, deliveryIds: [fourth], hasMore: false });

      const future = new Date(Date.now() + 3_600_000).toISOString();
      expect(await client.resendWebhookDeliveries(webhook.id, { createdFrom: future })).toMatchObject({ resent: 0 });
      const created = await client.resendWebhookDeliveries(webhook.id, { createdBefore: future });
      expect(created.deliveryIds).toEqual([first, ids[4]]);
      // Pending ones, by status (those just resent).
      const pendingAgain = await client.resendWebhookDeliveries(webhook.id, { status: 'pending', limit: 100 });
      expect(pendingAgain.deliveryIds).toEqual(ids);
    });

    it("answers 404 for an unknown webhook and another team's, 400 for a body it refuses", async () => {
      const webhook = await client.createWebhook({ url: 'https://8.8.8.8/walls' });
      await createPlants(61n);
      await attemptAll(() => false, null);
      expectError(await resend(MISSING_ID, '{}'), 404, `no webhook with id ${MISSING_ID}`);
      expectError(await resend('not-a-uuid', '{}'), 404);
      expectError(await resend(webhook.id, '{}', outsider), 404, `no webhook with id ${webhook.id}`);
      expectError(
        await resend(webhook.id, '{"status": "lost"}'),
        400,
        'status must be one of pending, delivered, failed',
      );
      expectError(await resend(webhook.id, '{"limit": 101}'), 400, 'limit must be an integer between 1 and 100');
      expectError(await resend(webhook.id, '{"after": "x"}'), 400);
      expectError(await resend(webhook.id, '{"createdFrom": "yesterday"}'), 400);
      expectError(
        await resend(webhook.id, '{"createdBefore": "2026-12-31T23:59:60Z"}'),
        400,
        'createdBefore must be an instant a clock can show (no leap second)',
      );
      expectError(await resend(webhook.id, '[]'), 400);
      expectError(await resend(webhook.id, '{}', plantsOnly), 403);
      // None of these touched the failed delivery.
      expect(statuses((await client.listWebhookDeliveries(webhook.id)).deliveries)).toEqual([[61n, 'failed']]);
    });

    it('answers a body that exceeds the limit with 413 and nothing resent', async () => {
      const webhook = await client.createWebhook({ url: 'https://8.8.8.8/big' });
      const answer = await resend(webhook.id, `{"pad": "${'x'.repeat(70_000)}"}`);
      expectError(answer, 413);
      const resent: ResentDeliveries = await client.resendWebhookDeliveries(webhook.id);
      expect(resent.resent).toBe(0);
    });
  });

  describe('GET /version', () => {
    it("answers the service's version without a token", async () => {
      const response = await request(url, '/version');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ version: readServiceVersion().version });
      expect(readServiceVersion().version).toMatch(/^\d+\.\d+\.\d+/);
      expect(await client.getServiceVersion()).toEqual({ version: readServiceVersion().version });
      await expect(client.checkReadiness()).resolves.toBeUndefined();
    });
  });
});
