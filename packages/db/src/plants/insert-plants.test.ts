import type { NewPlant } from '@plant-store/schema';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseUnavailableError, PlantConflictError } from '../errors.js';
import type { SqlRunner } from '../sql-runner.js';
import { fanOutAll, openTestClient, type TestClient } from '../test-support/open-test-client.js';
import { createTestStorage, type TestStorage, testEngines, testWebhook } from '../testing.js';
import { createWebhook } from '../webhooks/create-webhook.js';
import { fanOutEvents, webhookReceivers } from '../webhooks/fan-out-events.js';
import { insertPlants } from './insert-plants.js';
import { createPlantWriter, type PlantWriter } from './plant-writer.js';

interface EventRow {
  readonly id: string;
  readonly plant_id: string;
  readonly payload: string;
}

interface DeliveryRow {
  readonly event_id: string;
  readonly subscription_id: string;
  readonly status: string;
  readonly attempt_count: number;
  readonly due: boolean;
  readonly leased: boolean;
}

/** A created event's id: `msg_` and a UUIDv7 of the statement's clock and the event's seq. */
const EVENT_ID = /^msg_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe.each(testEngines())('the webhook outbox and its fan-out on %s', (engine) => {
  let storage: TestStorage;
  let client: TestClient;
  let writer: PlantWriter;
  /** Statements sent through the driver (every plant insert goes that way). */
  const statements = { count: 0 };
  const onEvents = { count: 0 };
  let subscriptions: string[] = [];

  async function eventsOf(ids: readonly bigint[]): Promise<EventRow[]> {
    return client.rows<EventRow>(
      `SELECT id, plant_id::text AS plant_id, payload FROM webhook_events
       WHERE plant_id = ANY ($1::text[]::bigint[]) ORDER BY plant_id`,
      [ids.map(String)],
    );
  }

  async function deliveriesOf(eventIds: readonly string[]): Promise<DeliveryRow[]> {
    return client.rows<DeliveryRow>(
      `SELECT event_id, subscription_id::text AS subscription_id, status, attempt_count,
         next_attempt_at <= now() AS due, (lease_id IS NOT NULL OR locked_until IS NOT NULL) AS leased
       FROM webhook_deliveries WHERE event_id = ANY ($1::text[]) ORDER BY event_id, subscription_id`,
      [[...eventIds]],
    );
  }

  async function plantsStored(ids: readonly bigint[]): Promise<number> {
    return client.prisma.plant.count({ where: { id: { in: [...ids] } } });
  }

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    client = await openTestClient(storage);
    const counting: SqlRunner = {
      query(text, values) {
        statements.count++;
        return client.sql.query(text, values);
      },
    };
    writer = createPlantWriter(counting, {
      maxBatchSize: 64,
      maxConcurrentBatches: 1,
      maxQueued: 10_000,
      maxWaitMs: 5_000,
      onEvents: () => onEvents.count++,
    });
  });
  afterAll(async () => {
    await client?.close();
    await storage?.dispose();
  });

  it('writes each event for the feed, queues none for the fan-out and nudges nobody, while no subscription exists', async () => {
    onEvents.count = 0;
    const results = await Promise.all([1n, 2n, 3n].map((id) => writer.create({ id, name: `quiet ${id}` })));
    expect(results.every((result) => result.created)).toBe(true);
    expect(onEvents.count).toBe(0);
    const events = await client.rows<{ plant_id: string; type: string; version: string; queued: boolean }>(
      `SELECT plant_id::text AS plant_id, type, version::text AS version, fanned_out_at IS NULL AS queued
       FROM webhook_events ORDER BY plant_id`,
    );
    expect(events).toEqual(
      results.map((result) => ({
        plant_id: String(result.plant.id),
        type: 'plant.created',
        version: String(result.version),
        queued: false,
      })),
    );
    expect(await client.rows('SELECT id FROM webhook_deliveries')).toEqual([]);
    await client.sql.query('DELETE FROM webhook_events', []);
  });

  it('writes the event in the statement that inserts the plant; the fan-out, one pending delivery per subscription', async () => {
    // Two of them at one receiver, spelled differently (case, the default port, the path).
    for (const url of ['https://a.example/hook', 'https://A.example:443/other', 'https://c.example/hook']) {
      subscriptions.push((await createWebhook(client.prisma, testWebhook({ url }))).id);
    }
    subscriptions = subscriptions.sort();
    statements.count = 0;
    expect(await writer.create({ id: 10n, name: 'Fern', tag: 'shade' })).toMatchObject({ created: true });
    expect(statements.count).toBe(1);
    const [event, ...more] = await eventsOf([10n]);
    expect(more).toEqual([]);
    expect(event?.id).toMatch(EVENT_ID);
    expect(event?.payload).toBe('{"id":10,"name":"Fern","tag":"shade"}');
    // The create wrote no delivery: that is the dispatcher's fan-out.
    expect(await deliveriesOf([event?.id ?? ''])).toEqual([]);
    // The receivers, once each however spelled, and by receiver (the URLs' origins, as
    // receiverOrigin writes them) what a fan-out wrote: what the dispatcher paces by.
    expect((await webhookReceivers(client.sql)).sort()).toEqual(['https://a.example', 'https://c.example']);
    expect(await fanOutEvents(client.sql, { maxDeliveries: 1024 })).toEqual({
      events: 1,
      deliveries: 3,
      deliveriesByReceiver: new Map([
        ['https://a.example', 2],
        ['https://c.example', 1],
      ]),
    });
    expect(await fanOutEvents(client.sql, { maxDeliveries: 1024 })).toEqual({
      events: 0,
      deliveries: 0,
      deliveriesByReceiver: new Map(),
    });
    // One delivery per subscription, all due now and free to claim, sharing the event (its id is
    // the webhook-id header: the same for every subscription).
    expect(await deliveriesOf([event?.id ?? ''])).toEqual(
      subscriptions.map((subscription) => ({
        event_id: event?.id,
        subscription_id: subscription,
        status: 'pending',
        attempt_count: 0,
        due: true,
        leased: false,
      })),
    );
  });

  it('writes the exact JSON body: int64 ids at both ends and past 2^53, tag omitted when absent', async () => {
    const plants: NewPlant[] = [
      { id: 2n ** 63n - 1n, name: 'Max "quoted" \\ é 🌱', tag: 'top' },
      { id: -(2n ** 63n), name: 'Min' },
      { id: 2n ** 53n + 1n, name: 'Past doubles', tag: '' },
    ];
    const results = await Promise.all(plants.map((plant) => writer.create(plant)));
    expect(results.every((result) => result.created)).toBe(true);
    const events = await eventsOf(plants.map((plant) => plant.id));
    // Ids ascend with the events' order: the right-hand edge of the primary key, not a random page.
    const { rows: ordered } = await client.sql.query<{ id: string }>(
      'SELECT id FROM webhook_events WHERE plant_id = ANY ($1::text[]::bigint[]) ORDER BY seq',
      [plants.map((plant) => plant.id.toString())],
    );
    expect(ordered.map((row) => row.id)).toEqual(ordered.map((row) => row.id).sort());
    for (const { id } of ordered) expect(id).toMatch(EVENT_ID);
    expect(events.map((event) => [event.plant_id, event.payload])).toEqual([
      ['-9223372036854775808', '{"id":-9223372036854775808,"name":"Min"}'],
      ['9007199254740993', '{"id":9007199254740993,"name":"Past doubles","tag":""}'],
      ['9223372036854775807', '{"id":9223372036854775807,"name":"Max \\"quoted\\" \\\\ é 🌱","tag":"top"}'],
    ]);
    expect(await fanOutAll(client.sql)).toBe(3 * 3);
    expect(await deliveriesOf(events.map((event) => event.id))).toHaveLength(3 * 3);
  });

  it('keeps each create’s traceparent with its own event, traced and untraced creates in one batch', async () => {
    const parents = [
      '00-11111111111111111111111111111111-1111111111111111-01',
      undefined,
      '00-33333333333333333333333333333333-3333333333333333-00',
    ];
    const ids = [27n, 26n, 25n];
    statements.count = 0;
    await Promise.all(ids.map((id, index) => writer.create({ id, name: `traced ${id}`, traceParent: parents[index] })));
    expect(statements.count).toBe(1);
    const rows = await client.rows<{ plant_id: string; trace_parent: string | null }>(
      `SELECT plant_id::text AS plant_id, trace_parent FROM webhook_events
       WHERE plant_id = ANY ($1::text[]::bigint[]) ORDER BY plant_id`,
      [ids.map(String)],
    );
    expect(rows).toEqual([
      { plant_id: '25', trace_parent: parents[2] },
      { plant_id: '26', trace_parent: null },
      { plant_id: '27', trace_parent: parents[0] },
    ]);
  });

  it('keeps each plant’s creating team, known or not, in one batch; a replay changes nothing', async () => {
    const teams = ['red', undefined, 'blue'];
    const ids = [37n, 36n, 35n];
    statements.count = 0;
    await Promise.all(ids.map((id, index) => writer.create({ id, name: `teamed ${id}`, team: teams[index] })));
    expect(statements.count).toBe(1);
    // Replayed by another team: the plant stays as it was, its creator included.
    await writer.create({ id: 37n, name: 'teamed 37', team: 'blue' });
    const rows = await client.rows<{ id: string; created_by_team: string | null }>(
      `SELECT id::text AS id, created_by_team FROM plants WHERE id = ANY ($1::text[]::bigint[]) ORDER BY id`,
      [ids.map(String)],
    );
    expect(rows).toEqual([
      { id: '35', created_by_team: 'blue' },
      { id: '36', created_by_team: null },
      { id: '37', created_by_team: 'red' },
    ]);
  });

  it('writes nothing for an idempotent replay or a conflict, and one event for ids repeated in a batch', async () => {
    await writer.create({ id: 20n, name: 'Stored' });
    onEvents.count = 0;
    const replay = await writer.create({ id: 20n, name: 'Stored' });
    expect(replay.created).toBe(false);
    await expect(writer.create({ id: 20n, name: 'Other' })).rejects.toBeInstanceOf(PlantConflictError);
    expect(onEvents.count).toBe(0);
    expect(await eventsOf([20n])).toHaveLength(1);

    const burst = await Promise.allSettled([
      writer.create({ id: 21n, name: 'Twin' }),
      writer.create({ id: 21n, name: 'Twin' }),
      writer.create({ id: 22n, name: 'First' }),
      writer.create({ id: 22n, name: 'Second' }),
    ]);
    expect(burst.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
    expect(onEvents.count).toBe(1);
    const events = await eventsOf([21n, 22n]);
    expect(events.map((event) => event.payload)).toEqual(['{"id":21,"name":"Twin"}', '{"id":22,"name":"First"}']);
    await fanOutAll(client.sql);
    expect(await deliveriesOf(events.map((event) => event.id))).toHaveLength(2 * 3);
  });

  it('leaves neither plants nor events when the statement fails in a plant row', async () => {
    const ids = [30n, 31n, 32n];
    await expect(
      insertPlants(client.sql, [
        { id: 30n, name: 'Fine' },
        { id: 31n, name: 'x'.repeat(300) }, // past varchar(255)
        { id: 32n, name: 'Also fine' },
      ]),
    ).rejects.toThrow();
    expect(await plantsStored(ids)).toBe(0);
    expect(await eventsOf(ids)).toEqual([]);
  });

  it('leaves neither plants nor events when the statement fails in its outbox part', async () => {
    // Every new event now breaks a constraint: the plants were written by then, within the
    // statement, and must go with it.
    await client.sql.query(
      'ALTER TABLE webhook_events ADD CONSTRAINT test_refuse_all CHECK (plant_id < 0) NOT VALID',
      [],
    );
    try {
      await expect(
        insertPlants(client.sql, [
          { id: 40n, name: 'Doomed' },
          { id: 41n, name: 'Doomed too' },
        ]),
      ).rejects.toThrow(/test_refuse_all/);
    } finally {
      await client.sql.query('ALTER TABLE webhook_events DROP CONSTRAINT test_refuse_all', []);
    }
    expect(await plantsStored([40n, 41n])).toBe(0);
    expect(await eventsOf([40n, 41n])).toEqual([]);
  });

  it('fans an event out wholly or not at all: a failed fan-out leaves it waiting, and the next one writes it', async () => {
    await writer.create({ id: 45n, name: 'Patient' });
    const [event] = await eventsOf([45n]);
    await client.sql.query(
      'ALTER TABLE webhook_deliveries ADD CONSTRAINT test_refuse_all CHECK (attempt_count < 0) NOT VALID',
      [],
    );
    try {
      await expect(fanOutEvents(client.sql, { maxDeliveries: 1024 })).rejects.toThrow(/test_refuse_all/);
    } finally {
      await client.sql.query('ALTER TABLE webhook_deliveries DROP CONSTRAINT test_refuse_all', []);
    }
    expect(await deliveriesOf([event?.id ?? ''])).toEqual([]);
    expect(await fanOutAll(client.sql)).toBe(3);
    expect(await deliveriesOf([event?.id ?? ''])).toHaveLength(3);
  });

  it('fans out to the subscriptions that existed when the event was written, a bounded batch at a time', async () => {
    await Promise.all([60n, 61n, 62n].map((id) => writer.create({ id, name: `batch ${id}` })));
    // Registered after those events were written: it gets none of them.
    await new Promise((resolve) => setTimeout(resolve, 10));
    const late = await createWebhook(client.prisma, testWebhook({ url: 'https://late.example/hook' }));
    try {
      // 4 deliveries a statement at most, 3 subscriptions then: one event a statement.
      for (let round = 0; round < 3; round++) {
        expect(await fanOutEvents(client.sql, { maxDeliveries: 4 })).toMatchObject({ events: 1, deliveries: 3 });
      }
      expect(await fanOutEvents(client.sql, { maxDeliveries: 4 })).toMatchObject({ events: 0, deliveries: 0 });
      const events = await eventsOf([60n, 61n, 62n]);
      const deliveries = await deliveriesOf(events.map((event) => event.id));
      expect(new Set(deliveries.map((delivery) => delivery.subscription_id))).toEqual(new Set(subscriptions));

      // A later plant goes to it too.
      await writer.create({ id: 63n, name: 'After' });
      expect(await fanOutAll(client.sql)).toBe(4);
    } finally {
      await client.sql.query('DELETE FROM webhook_subscriptions WHERE id = $1::uuid', [late.id]);
    }
  });

  it('skips a subscription that has the event already (a create of the previous version fanned it out)', async () => {
    await writer.create({ id: 70n, name: 'Rolling' });
    const [event] = await eventsOf([70n]);
    await client.sql.query(
      `INSERT INTO webhook_deliveries (event_id, subscription_id, status, next_attempt_at)
       VALUES ($1, $2::uuid, 'pending', now())`,
      [event?.id, subscriptions[0]],
    );
    expect(await fanOutAll(client.sql)).toBe(2);
    expect(await deliveriesOf([event?.id ?? ''])).toHaveLength(3);
  });

  it('writes the events of plants written one by one after a batch failed', async () => {
    onEvents.count = 0;
    const results = await Promise.allSettled([
      writer.create({ id: 50n, name: 'Fine' }),
      writer.create({ id: 51n, name: 'x'.repeat(300) }),
      writer.create({ id: 52n, name: 'Fine too' }),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    // Once per committed statement that inserted: the two were written one by one.
    expect(onEvents.count).toBe(2);
    const events = await eventsOf([50n, 51n, 52n]);
    expect(events.map((event) => event.plant_id)).toEqual(['50', '52']);
    expect(await fanOutAll(client.sql)).toBe(2 * 3);
    expect(await deliveriesOf(events.map((event) => event.id))).toHaveLength(2 * 3);
  });
});

describe.each(testEngines().filter((engine) => engine === 'postgres'))(
  'the fan-out racing a subscription delete on %s',
  (engine) => {
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

    it('runs the statement again when a subscription it saw is deleted before its foreign key check', async () => {
      const kept = await createWebhook(client.prisma, testWebhook({ url: 'https://kept.example/' }));
      const doomed = await createWebhook(client.prisma, testWebhook({ url: 'https://doomed.example/' }));
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(await insertPlants(client.sql, [{ id: 1n, name: 'Racer' }])).toEqual({
        versions: new Map([[1n, expect.any(BigInt)]]),
        events: 1,
      });
      const deleter = new pg.Client({ connectionString: storage.databaseUrl });
      await deleter.connect();
      try {
        await deleter.query('BEGIN');
        await deleter.query('DELETE FROM webhook_subscriptions WHERE id = $1', [doomed.id]);
        // The fan-out sees both subscriptions, and waits on the deleted one's row to check its key.
        const fanOut = fanOutEvents(client.sql, { maxDeliveries: 1024 });
        await new Promise((resolve) => setTimeout(resolve, 300));
        await deleter.query('COMMIT');
        expect(await fanOut).toEqual({
          events: 1,
          deliveries: 1,
          deliveriesByReceiver: new Map([['https://kept.example', 1]]),
        });
      } finally {
        await deleter.end();
      }
      const deliveries = await client.rows<{ subscription_id: string }>(
        'SELECT subscription_id::text AS subscription_id FROM webhook_deliveries',
      );
      expect(deliveries).toEqual([{ subscription_id: kept.id }]);
    });
  },
);

describe('the fan-out under subscriptions that keep vanishing', () => {
  it('runs the statement again on a foreign-key violation, then gives up with DatabaseUnavailableError (503)', async () => {
    // A unit fake: every run of the statement meets a subscription deleted under it.
    let runs = 0;
    const vanishing: SqlRunner = {
      query: () => {
        runs++;
        return Promise.reject(Object.assign(new Error('insert violates foreign key constraint'), { code: '23503' }));
      },
    };
    await expect(fanOutEvents(vanishing, { maxDeliveries: 1024 })).rejects.toBeInstanceOf(DatabaseUnavailableError);
    expect(runs).toBe(3);
  });
});
