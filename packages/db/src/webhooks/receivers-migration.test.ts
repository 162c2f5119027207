import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestClient, type TestClient } from '../test-support/open-test-client.js';
import { storageOfPreviousVersion } from '../test-support/previous-version.js';
import { createTestStorage, TEST_ACTOR, type TestStorage, testEngines } from '../testing.js';
import { claimDeliveries } from './claim-deliveries.js';
import { resendDelivery } from './list-deliveries.js';

/** The migration that stores receivers (and that claims scan by). */
const RECEIVERS_MIGRATION = '20261126111900_add_webhook_receivers';
const TIMEOUT = 120_000;

const SUBSCRIPTION = '6f1d3a52-7a4e-4c55-9a57-0d5b2e7e2b01';

/**
 * What a previous version left behind: a subscription, two events, a pending delivery of the
 * first and a delivered one of the second (no receiver anywhere: the columns do not exist yet).
 */
const PREVIOUS_VERSION_ROWS = `
INSERT INTO webhook_subscriptions (id, url, secret) VALUES ('${SUBSCRIPTION}', 'https://Hooks.Example:443/plants', 'whsec_dGVzdA==');
INSERT INTO webhook_events (id, plant_id, payload, fanned_out_at) VALUES
  ('msg_a', 1, '{"id":1,"name":"a"}', now()), ('msg_b', 2, '{"id":2,"name":"b"}', now()), ('msg_c', 3, '{"id":3,"name":"c"}', now());
INSERT INTO webhook_deliveries (event_id, subscription_id, status, next_attempt_at) VALUES ('msg_a', '${SUBSCRIPTION}', 'pending', now());
INSERT INTO webhook_deliveries (event_id, subscription_id, status, attempt_count, delivered_at) VALUES ('msg_b', '${SUBSCRIPTION}', 'delivered', 1, now());
`;

describe.each(testEngines())('upgrading to stored receivers on %s', (engine) => {
  let storage: TestStorage;
  let client: TestClient;

  beforeAll(async () => {
    storage = await createTestStorage(engine);
    await storageOfPreviousVersion(storage, RECEIVERS_MIGRATION, PREVIOUS_VERSION_ROWS);
    // Applies the rest, RECEIVERS_MIGRATION among them.
    client = await openTestClient(storage);
  }, TIMEOUT);
  afterAll(async () => {
    await client?.close();
    await storage?.dispose();
  });

  const deliveries = () =>
    client.rows<{ event_id: string; status: string; receiver: string | null }>(
      'SELECT event_id, status, receiver FROM webhook_deliveries ORDER BY event_id',
    );

  it('gives the subscription and its pending delivery their receiver; a finished one needs none', async () => {
    expect(await client.rows('SELECT receiver FROM webhook_subscriptions')).toEqual([
      { receiver: 'https://hooks.example' },
    ]);
    expect(await deliveries()).toEqual([
      { event_id: 'msg_a', status: 'pending', receiver: 'https://hooks.example' },
      { event_id: 'msg_b', status: 'delivered', receiver: null },
    ]);
  });

  it("fills the receiver of a pending delivery written without one (a previous version's fan-out, a resend)", async () => {
    // A replica still on the previous version fans out an event during the rolling deploy.
    await client.sql.query(
      `INSERT INTO webhook_deliveries (event_id, subscription_id, status, next_attempt_at) VALUES ('msg_c', $1::uuid, 'pending', now())`,
      [SUBSCRIPTION],
    );
    // The delivered one, finished before the migration, resent.
    const [delivered] = await client.rows<{ id: string }>(
      `SELECT id::text AS id FROM webhook_deliveries WHERE event_id = 'msg_b'`,
    );
    expect(
      await resendDelivery(client.prisma, SUBSCRIPTION, BigInt(delivered?.id ?? '0'), { actor: TEST_ACTOR }),
    ).not.toBeNull();
    expect(await deliveries()).toEqual([
      { event_id: 'msg_a', status: 'pending', receiver: 'https://hooks.example' },
      { event_id: 'msg_b', status: 'pending', receiver: 'https://hooks.example' },
      { event_id: 'msg_c', status: 'pending', receiver: 'https://hooks.example' },
    ]);
    // And a claim finds all three.
    const claimed = await claimDeliveries(client.sql, { limit: 10, perWebhookLimit: 10, leaseMs: 60_000 });
    expect(claimed.map((delivery) => delivery.eventId).sort()).toEqual(['msg_a', 'msg_b', 'msg_c']);
  });
});
