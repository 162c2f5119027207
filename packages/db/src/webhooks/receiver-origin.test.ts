import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertPlantsFannedOut, openTestClient, type TestClient } from '../test-support/open-test-client.js';
import { createTestStorage, type TestStorage, testEngines, testWebhook } from '../testing.js';
import { createWebhook } from './create-webhook.js';
import { receiverOrigin } from './receiver-origin.js';

const CASES: ReadonlyArray<readonly [url: string, origin: string]> = [
  ['https://hooks.example/plants', 'https://hooks.example'],
  ['https://Hooks.Example:443/a?b=c', 'https://hooks.example'],
  ['HTTP://hooks.example:80', 'http://hooks.example'],
  ['http://hooks.example:8080/x', 'http://hooks.example:8080'],
  ['https://hooks.example:80/x', 'https://hooks.example:80'],
  ['http://hooks.example:443/x', 'http://hooks.example:443'],
  ['http://127.0.0.1:3000/hook', 'http://127.0.0.1:3000'],
  ['http://[::1]:8080/hook', 'http://[::1]:8080'],
  ['https://hooks.example?x=1', 'https://hooks.example'],
  ['https://hooks.example:4430/x', 'https://hooks.example:4430'],
];

describe('receiverOrigin', () => {
  it.each(CASES)('%s is the receiver %s', (url, origin) => {
    expect(receiverOrigin(url)).toBe(origin);
  });
});

describe.each(testEngines())('the receiver column on %s', (engine) => {
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

  it('computes what receiverOrigin does, for every case', async () => {
    const { rows } = await client.sql.query<{ url: string; origin: string }>(
      'SELECT cases.url, public.webhook_receiver_origin(cases.url) AS origin FROM unnest($1::text[]) AS cases (url)',
      [CASES.map(([url]) => url)],
    );
    expect(rows.map((row) => [row.url, row.origin])).toEqual(CASES.map(([url]) => [url, receiverOrigin(url)]));
  });

  it("keeps a subscription's receiver, and its pending deliveries', to its URL, whatever the writer says", async () => {
    const webhook = await createWebhook(client.prisma, testWebhook({ url: 'https://Hooks.Example:443/plants' }));
    await insertPlantsFannedOut(client.sql, [
      { id: 1n, name: 'pending' },
      { id: 2n, name: 'delivered' },
    ]);
    await client.sql.query(
      "UPDATE webhook_deliveries SET status = 'delivered' WHERE event_id IN (SELECT id FROM webhook_events WHERE plant_id = 2)",
      [],
    );
    const deliveryReceivers = () =>
      client.rows<{ plant_id: string; receiver: string }>(
        `SELECT events.plant_id::text AS plant_id, deliveries.receiver
         FROM webhook_deliveries AS deliveries JOIN webhook_events AS events ON events.id = deliveries.event_id
         ORDER BY events.plant_id`,
      );
    const receiverOf = async () =>
      (
        await client.rows<{ receiver: string }>('SELECT receiver FROM webhook_subscriptions WHERE id = $1::uuid', [
          webhook.id,
        ])
      )[0]?.receiver;
    expect(await receiverOf()).toBe('https://hooks.example');
    await client.sql.query(
      "UPDATE webhook_subscriptions SET receiver = 'https://elsewhere.example' WHERE id = $1::uuid",
      [webhook.id],
    );
    expect(await receiverOf()).toBe('https://hooks.example');
    await client.sql.query("UPDATE webhook_subscriptions SET url = 'http://other.example:8080/x' WHERE id = $1::uuid", [
      webhook.id,
    ]);
    expect(await receiverOf()).toBe('http://other.example:8080');
    // The pending delivery goes where claims will look for it; the delivered one is history.
    expect(await deliveryReceivers()).toEqual([
      { plant_id: '1', receiver: 'http://other.example:8080' },
      { plant_id: '2', receiver: 'https://hooks.example' },
    ]);
  });
});
