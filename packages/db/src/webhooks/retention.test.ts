import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertPlantsFannedOut, openTestClient, type TestClient } from '../test-support/open-test-client.js';
import { createTestStorage, type TestStorage, testEngines, testWebhook } from '../testing.js';
import { createWebhook } from './create-webhook.js';
import { deleteOldWebhookData } from './retention.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const THIRTY_DAYS = { olderThanMs: 30 * DAY_MS, batchSize: 1_000 };

describe.each(testEngines())('webhook retention on %s', (engine) => {
  let storage: TestStorage;
  let client: TestClient;
  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    client = await openTestClient(storage);
  });
  afterAll(async () => {
    await client?.close();
    await storage?.dispose();
  });

  /** Plants 1..n with one subscription: one event and one delivery each, with one attempt. */
  async function seed(plants: number): Promise<void> {
    await client.sql.query('DELETE FROM webhook_subscriptions', []);
    await client.sql.query('DELETE FROM webhook_events', []);
    await client.sql.query('DELETE FROM plants', []);
    await createWebhook(client.prisma, testWebhook({ url: 'https://receiver.example/hooks' }));
    const ids = Array.from({ length: plants }, (_, index) => BigInt(index + 1));
    await insertPlantsFannedOut(
      client.sql,
      ids.map((id) => ({ id, name: `plant ${id}` })),
    );
    await client.sql.query(
      `INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms)
       SELECT id, now(), 204, 5 FROM webhook_deliveries`,
      [],
    );
  }

  /** Sets the deliveries (and events) of `plants` to `status`, created `daysAgo` days ago. */
  async function age(plants: readonly number[], status: string, daysAgo: number): Promise<void> {
    const events = `SELECT id FROM webhook_events WHERE plant_id = ANY ($1::int[])`;
    await client.sql.query(
      `UPDATE webhook_deliveries SET status = $2, created_at = now() - $3::int * interval '1 day'
       WHERE event_id IN (${events})`,
      [plants, status, daysAgo],
    );
    await client.sql.query(
      `UPDATE webhook_events SET created_at = now() - $2::int * interval '1 day' WHERE plant_id = ANY ($1::int[])`,
      [plants, daysAgo],
    );
  }

  async function remaining() {
    const plantsOf = async (query: string) =>
      (await client.sql.query<{ plant: number }>(query, [])).rows.map((row) => row.plant).sort((a, b) => a - b);
    return {
      deliveries: await plantsOf(
        'SELECT events.plant_id::int AS plant FROM webhook_deliveries JOIN webhook_events AS events ON events.id = webhook_deliveries.event_id',
      ),
      events: await plantsOf('SELECT plant_id::int AS plant FROM webhook_events'),
      attempts: await plantsOf(
        `SELECT events.plant_id::int AS plant FROM webhook_attempts
         JOIN webhook_deliveries AS deliveries ON deliveries.id = webhook_attempts.delivery_id
         JOIN webhook_events AS events ON events.id = deliveries.event_id`,
      ),
    };
  }

  it('deletes finished deliveries past the period, their attempts, and events with nothing left; keeps the rest', async () => {
    await seed(7);
    await age([1, 2], 'delivered', 40);
    await age([3], 'failed', 40);
    // Old but still pending (retrying, or resent): neither it nor its event may go.
    await age([4], 'pending', 40);
    // Finished, but within the period.
    await age([5], 'delivered', 29);
    await age([6], 'failed', 1);
    // 7: pending and new.

    expect(await deleteOldWebhookData(client.sql, THIRTY_DAYS)).toEqual({ deliveries: 3, events: 3 });
    expect(await remaining()).toEqual({ deliveries: [4, 5, 6, 7], events: [4, 5, 6, 7], attempts: [4, 5, 6, 7] });
    // Nothing more to do: a second run deletes nothing.
    expect(await deleteOldWebhookData(client.sql, THIRTY_DAYS)).toEqual({ deliveries: 0, events: 0 });
  });

  it('deletes at most batchSize rows of each kind per call, the oldest first', async () => {
    await seed(5);
    await age([1], 'delivered', 50);
    await age([2], 'delivered', 45);
    await age([3, 4, 5], 'delivered', 40);

    expect(await deleteOldWebhookData(client.sql, { ...THIRTY_DAYS, batchSize: 2 })).toEqual({
      deliveries: 2,
      events: 2,
    });
    expect((await remaining()).deliveries).toEqual([3, 4, 5]);
    expect(await deleteOldWebhookData(client.sql, { ...THIRTY_DAYS, batchSize: 2 })).toEqual({
      deliveries: 2,
      events: 2,
    });
    expect(await deleteOldWebhookData(client.sql, { ...THIRTY_DAYS, batchSize: 2 })).toEqual({
      deliveries: 1,
      events: 1,
    });
    expect(await remaining()).toEqual({ deliveries: [], events: [], attempts: [] });
  });

  it('keeps an old event no dispatcher has fanned out yet, however old', async () => {
    await seed(2);
    await client.sql.query('DELETE FROM webhook_deliveries', []);
    await age([1, 2], 'delivered', 40);
    // Event 2 is still waiting for its fan-out (dispatchers down for 40 days).
    await client.sql.query('UPDATE webhook_events SET fanned_out_at = NULL WHERE plant_id = 2', []);

    expect(await deleteOldWebhookData(client.sql, THIRTY_DAYS)).toEqual({ deliveries: 0, events: 1 });
    expect((await remaining()).events).toEqual([2]);
  });
});
