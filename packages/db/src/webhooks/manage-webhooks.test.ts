import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebhookLimitError } from '../errors.js';
import { insertPlantsFannedOut, openTestClient, type TestClient } from '../test-support/open-test-client.js';
import { createTestStorage, TEST_ACTOR, type TestStorage, testEngines, testWebhook } from '../testing.js';
import { claimDeliveries } from './claim-deliveries.js';
import { createWebhook, WEBHOOK_LIMIT } from './create-webhook.js';
import { listDeliveries, resendDelivery } from './list-deliveries.js';
import { deleteWebhook, listWebhooks } from './manage-webhooks.js';
import { recordAttempt } from './record-attempt.js';
import type { AttemptOutcome, ClaimedDelivery } from './webhook-records.js';

const CLAIM_ALL = { limit: 1_000, perWebhookLimit: 1_000, leaseMs: 60_000 };

function outcome(delivered: boolean, statusCode: number): AttemptOutcome {
  return {
    delivered,
    retryAt: null,
    attemptedAt: new Date(),
    statusCode,
    latencyMs: 5,
    error: delivered ? null : `answered ${statusCode}`,
  };
}

async function count(client: TestClient, table: string): Promise<number> {
  const [row] = await client.rows<{ count: number }>(`SELECT count(*)::int AS count FROM ${table}`);
  return row?.count ?? -1;
}

describe.each(testEngines())('webhook subscriptions and their deliveries on %s', (engine) => {
  let storage: TestStorage;
  let client: TestClient;
  const claimFor = async (webhookId: string): Promise<ClaimedDelivery[]> =>
    (await claimDeliveries(client.sql, CLAIM_ALL)).filter((claim) => claim.webhookId === webhookId);

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    client = await openTestClient(storage);
  });
  beforeEach(async () => {
    await client.sql.query('DELETE FROM webhook_subscriptions', []);
    await client.sql.query('DELETE FROM webhook_events', []);
    await client.sql.query('DELETE FROM plants', []);
  });
  afterAll(async () => {
    await client?.close();
    await storage?.dispose();
  });

  it('creates each with a fresh 32-byte whsec_ secret, and lists them in creation order without secrets', async () => {
    const first = await createWebhook(
      client.prisma,
      testWebhook({ url: 'https://a.example/hook', description: 'Stock sync' }),
    );
    const second = await createWebhook(client.prisma, testWebhook({ url: 'http://b.example:8080/in?x=1' }));
    expect(first).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      url: 'https://a.example/hook',
      description: 'Stock sync',
      team: 'default',
      createdAt: expect.any(Date),
      eventTypes: ['plant.created'],
      enabled: true,
      disabledAt: null,
      disabledReason: null,
      previousSecretExpiresAt: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect(Buffer.from(first.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(second.description).toBeNull();
    expect(second.secret).not.toBe(first.secret);
    const { secret: _first, ...firstListed } = first;
    const { secret: _second, ...secondListed } = second;
    expect(await listWebhooks(client.prisma)).toEqual([firstListed, secondListed]);
  });

  it('deletes a webhook with its deliveries and their attempts, keeping the events; false for unknown ids', async () => {
    const doomed = await createWebhook(client.prisma, testWebhook({ url: 'https://doomed.example/' }));
    const kept = await createWebhook(client.prisma, testWebhook({ url: 'https://kept.example/' }));
    await insertPlantsFannedOut(client.sql, [
      { id: 1n, name: 'One' },
      { id: 2n, name: 'Two' },
    ]);
    for (const claim of await claimFor(doomed.id)) await recordAttempt(client.sql, claim, outcome(false, 500));
    expect(await count(client, 'webhook_attempts')).toBe(2);

    expect(await deleteWebhook(client.prisma, doomed.id, { actor: TEST_ACTOR })).toBe(true);
    expect(await listWebhooks(client.prisma)).toEqual([expect.objectContaining({ id: kept.id })]);
    expect(await listDeliveries(client.prisma, doomed.id, { limit: 10 })).toBeNull();
    expect(await count(client, 'webhook_attempts')).toBe(0);
    expect(await count(client, 'webhook_deliveries')).toBe(2); // kept's
    expect(await count(client, 'webhook_events')).toBe(2);

    expect(await deleteWebhook(client.prisma, doomed.id, { actor: TEST_ACTOR })).toBe(false);
    expect(await deleteWebhook(client.prisma, randomUUID(), { actor: TEST_ACTOR })).toBe(false);
    expect(await deleteWebhook(client.prisma, 'not-a-uuid', { actor: TEST_ACTOR })).toBe(false);
    expect(await deleteWebhook(client.prisma, `${kept.id}'; DROP TABLE plants; --`, { actor: TEST_ACTOR })).toBe(false);
  });

  it(`holds the limit of ${WEBHOOK_LIMIT} against 20 concurrent creates at 95`, async () => {
    await client.sql.query(
      `INSERT INTO webhook_subscriptions (url, secret)
       SELECT 'https://seed.example/' || n, 'whsec_seed' FROM generate_series(1, 95) AS n`,
      [],
    );
    // On PostgreSQL, half of them from a second pool: another replica.
    const other = engine === 'postgres' ? await openTestClient(storage) : client;
    try {
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, index) =>
          createWebhook(
            (index % 2 === 0 ? client : other).prisma,
            testWebhook({ url: `https://racer.example/${index}` }),
          ),
        ),
      );
      const refused = results.filter((result) => result.status === 'rejected');
      expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(5);
      for (const result of refused) expect(result.reason).toBeInstanceOf(WebhookLimitError);
      expect(await count(client, 'webhook_subscriptions')).toBe(WEBHOOK_LIMIT);
    } finally {
      if (other !== client) await other.close();
    }
    await expect(createWebhook(client.prisma, testWebhook({ url: 'https://late.example/' }))).rejects.toThrow(
      `team "default" has ${WEBHOOK_LIMIT} webhooks registered`,
    );
  });

  it('disables a subscription once every attempt has failed for the period; a success clears the count', async () => {
    const healthy = await createWebhook(client.prisma, testWebhook({ url: 'https://healthy.example/' }));
    const failing = await createWebhook(client.prisma, testWebhook({ url: 'https://failing.example/' }));
    await insertPlantsFannedOut(client.sql, [{ id: 1n, name: 'one' }]);
    const state = async (id: string) => {
      const [row] = await client.rows<{ enabled: boolean; failing: boolean; reason: string | null }>(
        `SELECT enabled, failing_since IS NOT NULL AS failing, disabled_reason AS reason
         FROM webhook_subscriptions WHERE id = $1::uuid`,
        [id],
      );
      return row;
    };
    const disable = { afterMs: 60_000 };
    const retryNow = (attemptedAt: Date) => ({
      ...outcome(false, 500),
      attemptedAt,
      retryAt: new Date(Date.now() - 1),
    });

    // Both first attempts claimed at once (a claim leases every due delivery).
    const claims = await claimDeliveries(client.sql, CLAIM_ALL);
    const first = claims.find((claim) => claim.webhookId === healthy.id);
    const old = claims.find((claim) => claim.webhookId === failing.id);
    if (!first || !old) throw new Error('two claims expected');
    // A failure, then a success: the count starts and is cleared.
    await recordAttempt(client.sql, first, retryNow(new Date()), disable);
    expect(await state(healthy.id)).toEqual({ enabled: true, failing: true, reason: null });
    const [second] = await claimFor(healthy.id);
    if (!second) throw new Error('the retry expected');
    await recordAttempt(client.sql, second, outcome(true, 200), disable);
    expect(await state(healthy.id)).toEqual({ enabled: true, failing: false, reason: null });

    // Failures only, the first a period ago (attempted_at is the attempt's own time): disabled by the next.
    await recordAttempt(client.sql, old, retryNow(new Date(Date.now() - 61_000)), disable);
    expect(await state(failing.id)).toMatchObject({ enabled: false, failing: true });
    expect((await state(failing.id))?.reason).toMatch(
      /^disabled by the service: every delivery attempt failed for 60 s \(since \d{4}-/,
    );
    // Its pending delivery waits: no claim finds it.
    expect(await claimFor(failing.id)).toEqual([]);
    const [delivery] = (await listDeliveries(client.prisma, failing.id, { limit: 10 }))?.deliveries ?? [];
    expect(delivery?.status).toBe('pending');
  });

  it('pages through a webhook’s deliveries in ascending id order, each with its attempts oldest first', async () => {
    const webhook = await createWebhook(client.prisma, testWebhook({ url: 'https://paged.example/' }));
    const other = await createWebhook(client.prisma, testWebhook({ url: 'https://other.example/' }));
    const plantIds = [5n, -(2n ** 63n), 2n ** 63n - 1n, 3n, 4n];
    await insertPlantsFannedOut(
      client.sql,
      plantIds.map((id) => ({ id, name: `p${id}` })),
    );
    // Two attempts on one delivery: a failure then a success.
    const [claim] = await claimFor(webhook.id);
    if (!claim) throw new Error('a claim expected');
    await recordAttempt(client.sql, claim, { ...outcome(false, 503), retryAt: new Date(Date.now() - 1) });
    const [again] = (await claimFor(webhook.id)).filter((next) => next.deliveryId === claim.deliveryId);
    if (!again) throw new Error('the retry expected');
    await recordAttempt(client.sql, again, outcome(true, 200));

    const pages = [];
    let after: bigint | undefined;
    for (;;) {
      const page = await listDeliveries(client.prisma, webhook.id, {
        limit: 2,
        ...(after === undefined ? {} : { after }),
      });
      if (page === null) throw new Error('the webhook exists');
      pages.push(page);
      after = page.deliveries.at(-1)?.id;
      if (!page.hasMore) break;
    }
    expect(pages.map((page) => [page.deliveries.length, page.hasMore])).toEqual([
      [2, true],
      [2, true],
      [1, false],
    ]);
    const deliveries = pages.flatMap((page) => page.deliveries);
    const ids = deliveries.map((delivery) => delivery.id);
    expect(ids).toEqual([...ids].sort((a, b) => (a < b ? -1 : 1)));
    expect(deliveries.every((delivery) => delivery.webhookId === webhook.id)).toBe(true);
    expect(deliveries.map((delivery) => delivery.plantId).sort((a, b) => (a < b ? -1 : 1))).toEqual([
      -(2n ** 63n),
      3n,
      4n,
      5n,
      2n ** 63n - 1n,
    ]);
    const retried = deliveries.find((delivery) => delivery.id === claim.deliveryId);
    expect(retried?.status).toBe('delivered');
    expect(retried?.attempts.map((attempt) => [attempt.statusCode, attempt.error])).toEqual([
      [503, 'answered 503'],
      [200, null],
    ]);
    // The other webhook's deliveries are its own.
    expect((await listDeliveries(client.prisma, other.id, { limit: 100 }))?.deliveries).toHaveLength(5);

    const last = ids.at(-1) ?? 0n;
    expect(await listDeliveries(client.prisma, webhook.id, { limit: 5, after: last })).toEqual({
      deliveries: [],
      hasMore: false,
    });
    expect(await listDeliveries(client.prisma, randomUUID(), { limit: 5 })).toBeNull();
    expect(await listDeliveries(client.prisma, 'nope', { limit: 5 })).toBeNull();
    const quiet = await createWebhook(client.prisma, testWebhook({ url: 'https://quiet.example/' }));
    expect(await listDeliveries(client.prisma, quiet.id, { limit: 5 })).toEqual({ deliveries: [], hasMore: false });
  });

  it('resends a delivery of any status now, keeping its attempts; a holder of its lease then records nothing', async () => {
    const webhook = await createWebhook(client.prisma, testWebhook({ url: 'https://resend.example/' }));
    const other = await createWebhook(client.prisma, testWebhook({ url: 'https://other.example/' }));
    await insertPlantsFannedOut(client.sql, [{ id: 1n, name: 'One' }]);
    const [claim] = await claimFor(webhook.id);
    if (!claim) throw new Error('a claim expected');
    await recordAttempt(client.sql, claim, outcome(true, 204));

    const resent = await resendDelivery(client.prisma, webhook.id, claim.deliveryId, { actor: TEST_ACTOR });
    expect(resent).toMatchObject({
      id: claim.deliveryId,
      webhookId: webhook.id,
      status: 'pending',
      deliveredAt: null,
      attempts: [expect.objectContaining({ statusCode: 204 })],
    });
    expect(Math.abs((resent?.nextAttemptAt?.getTime() ?? 0) - Date.now())).toBeLessThan(5_000);
    const [again] = await claimFor(webhook.id);
    expect(again).toMatchObject({ deliveryId: claim.deliveryId, attemptNumber: 2 });
    if (!again) throw new Error('a claim expected');

    // Resent while leased: the lease is cleared, and the holder's outcome is not recorded.
    await resendDelivery(client.prisma, webhook.id, claim.deliveryId, { actor: TEST_ACTOR });
    expect(await recordAttempt(client.sql, again, outcome(false, 500))).toBe(false);
    const [third] = await claimFor(webhook.id);
    expect(third).toMatchObject({ deliveryId: claim.deliveryId, attemptNumber: 2 });
    if (!third) throw new Error('a claim expected');
    await recordAttempt(client.sql, third, outcome(false, 500));
    expect(await resendDelivery(client.prisma, webhook.id, claim.deliveryId, { actor: TEST_ACTOR })).toMatchObject({
      status: 'pending',
    });

    expect(await resendDelivery(client.prisma, other.id, claim.deliveryId, { actor: TEST_ACTOR })).toBeNull();
    expect(
      await resendDelivery(client.prisma, webhook.id, claim.deliveryId + 1_000n, { actor: TEST_ACTOR }),
    ).toBeNull();
    expect(await resendDelivery(client.prisma, 'nope', claim.deliveryId, { actor: TEST_ACTOR })).toBeNull();
  });
});
