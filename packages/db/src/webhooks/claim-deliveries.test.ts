import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { insertPlantsFannedOut, openTestClient, type TestClient } from '../test-support/open-test-client.js';
import { createTestStorage, TEST_ACTOR, type TestStorage, testEngines, testWebhook } from '../testing.js';
import { CLAIM_DELIVERIES_SQL, type ClaimOptions, claimDeliveries } from './claim-deliveries.js';
import { createWebhook } from './create-webhook.js';
import { listDeliveries } from './list-deliveries.js';
import { deleteWebhook } from './manage-webhooks.js';
import { createAttemptRecorder, recordAttempt, releaseClaim } from './record-attempt.js';
import type { AttemptOutcome, ClaimedDelivery, CreatedWebhook } from './webhook-records.js';

const CLAIM_ALL: ClaimOptions = { limit: 1_000, perWebhookLimit: 1_000, leaseMs: 60_000 };

const delivered = (attemptedAt = new Date()): AttemptOutcome => ({
  delivered: true,
  retryAt: null,
  attemptedAt,
  statusCode: 204,
  latencyMs: 12,
  error: null,
});

const failed = (retryAt: Date | null, statusCode: number | null = 500): AttemptOutcome => ({
  delivered: false,
  retryAt,
  attemptedAt: new Date(),
  statusCode,
  latencyMs: 3_000.4,
  error: statusCode === null ? 'connection refused' : `answered ${statusCode}`,
  // The receiver's answer, when one came.
  responseExcerpt: statusCode === null ? null : `{"status":${statusCode}}`,
});

/** Subscriptions, then plants: one delivery per (plant, subscription). */
async function seed(client: TestClient, webhookCount: number, plantIds: readonly bigint[]): Promise<CreatedWebhook[]> {
  const webhooks: CreatedWebhook[] = [];
  for (let index = 0; index < webhookCount; index++) {
    webhooks.push(await createWebhook(client.prisma, testWebhook({ url: `https://receiver-${index}.example/hooks` })));
  }
  await insertPlantsFannedOut(
    client.sql,
    plantIds.map((id) => ({ id, name: `plant ${id}` })),
  );
  return webhooks;
}

async function clearWebhooks(client: TestClient): Promise<void> {
  await client.sql.query('DELETE FROM webhook_subscriptions', []);
  await client.sql.query('DELETE FROM webhook_events', []);
  await client.sql.query('DELETE FROM plants', []);
}

/** The parts of an `EXPLAIN (ANALYZE, FORMAT JSON)` node this suite reads. */
interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly Alias?: string;
  readonly 'Actual Rows': number;
  readonly 'Actual Loops': number;
  readonly 'Rows Removed by Filter'?: number;
  readonly Plans?: readonly PlanNode[];
}

function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

describe.each(testEngines())('delivery leases on %s', (engine) => {
  let storage: TestStorage;
  let client: TestClient;
  const claim = (options: Partial<ClaimOptions> = {}) => claimDeliveries(client.sql, { ...CLAIM_ALL, ...options });
  /** Every node of the claim statement's plan, run under `EXPLAIN ANALYZE` with these parameters. */
  const explainClaim = async (values: unknown[]): Promise<PlanNode[]> => {
    const [row] = await client.rows<{ 'QUERY PLAN': unknown }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${CLAIM_DELIVERIES_SQL}`,
      values,
    );
    const explained = row?.['QUERY PLAN'];
    const [result] = (typeof explained === 'string' ? JSON.parse(explained) : explained) as { Plan: PlanNode }[];
    if (!result) throw new Error('no plan');
    return planNodes(result.Plan);
  };

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    client = await openTestClient(storage);
  });
  beforeEach(() => clearWebhooks(client));
  afterAll(async () => {
    await client?.close();
    await storage?.dispose();
  });

  it('leases each due delivery once, with everything needed to send it', async () => {
    const [webhook] = await seed(client, 1, [2n ** 63n - 1n, 7n]);
    const [{ now }] = (await client.rows<{ now: Date }>('SELECT now() AS now')) as [{ now: Date }];
    const claims = await claim({ leaseMs: 30_000 });
    expect(claims).toHaveLength(2);
    expect(claims.map((claimed) => claimed.payload).sort()).toEqual([
      '{"id":7,"name":"plant 7"}',
      '{"id":9223372036854775807,"name":"plant 9223372036854775807"}',
    ]);
    for (const claimed of claims) {
      expect(claimed).toMatchObject({ webhookId: webhook?.id, url: webhook?.url, secrets: [webhook?.secret] });
      expect(claimed.eventId).toMatch(/^msg_[0-9a-f-]{36}$/);
      expect(claimed.leaseId).toMatch(/^[0-9a-f-]{36}$/);
      expect(claimed.attemptNumber).toBe(1);
      expect(typeof claimed.deliveryId).toBe('bigint');
      // Database time: now() plus the lease.
      const leaseMs = claimed.leaseExpiresAt.getTime() - now.getTime();
      expect(leaseMs).toBeGreaterThanOrEqual(29_000);
      expect(leaseMs).toBeLessThanOrEqual(31_000);
    }
    expect(new Set(claims.map((claimed) => claimed.leaseId)).size).toBe(2);
    expect(await claim()).toEqual([]);
  });

  it('keeps to limit, perWebhookLimit (less what is busy) and excludeWebhookIds', async () => {
    const webhooks = await seed(client, 3, [1n, 2n, 3n, 4n, 5n]);
    const [a, b, c] = webhooks.map((webhook) => webhook.id) as [string, string, string];
    const releaseAll = (claims: readonly ClaimedDelivery[]) =>
      Promise.all(claims.map((claimed) => releaseClaim(client.sql, claimed)));

    const perWebhook = await claim({ perWebhookLimit: 2 });
    expect(countBy(perWebhook, (claimed) => claimed.webhookId)).toEqual({ [a]: 2, [b]: 2, [c]: 2 });
    await releaseAll(perWebhook);

    const limited = await claim({ limit: 4 });
    expect(limited).toHaveLength(4);
    await releaseAll(limited);

    const excluded = await claim({ excludeWebhookIds: [a, b] });
    expect(countBy(excluded, (claimed) => claimed.webhookId)).toEqual({ [c]: 5 });
    await releaseAll(excluded);

    // Topped up: 3 of a's and 1 of b's in flight already leave a 1 and b 3 of perWebhookLimit 4.
    const topped = await claim({
      perWebhookLimit: 4,
      busyWebhooks: new Map([
        [a, 3],
        [b, 1],
        [c, 7],
      ]),
    });
    expect(countBy(topped, (claimed) => claimed.webhookId)).toEqual({ [a]: 1, [b]: 3 });
    await releaseAll(topped);

    const both = await claim({ perWebhookLimit: 3, excludeWebhookIds: [c] });
    expect(countBy(both, (claimed) => claimed.webhookId)).toEqual({ [a]: 3, [b]: 3 });
    // What is leased is skipped: the rest of a and b, and all of c.
    expect(countBy(await claim(), (claimed) => claimed.webhookId)).toEqual({ [a]: 2, [b]: 2, [c]: 5 });
  });

  it('keeps to perReceiverLimit across the subscriptions of one receiver, less what is busy there', async () => {
    const shared = [];
    for (const path of ['a', 'b', 'c']) {
      shared.push(await createWebhook(client.prisma, testWebhook({ url: `https://Shared.example:443/${path}` })));
    }
    const other = await createWebhook(client.prisma, testWebhook({ url: 'https://other.example/hooks' }));
    await insertPlantsFannedOut(
      client.sql,
      [1n, 2n, 3n].map((id) => ({ id, name: `plant ${id}` })),
    );
    const receiverOf = (claimed: ClaimedDelivery) => (claimed.webhookId === other.id ? 'other' : 'shared');
    const releaseAll = (claims: readonly ClaimedDelivery[]) =>
      Promise.all(claims.map((claimed) => releaseClaim(client.sql, claimed)));

    // Three subscriptions of one receiver, nine due deliveries there: two of them at most.
    const limited = await claim({ perReceiverLimit: 2 });
    expect(countBy(limited, receiverOf)).toEqual({ shared: 2, other: 2 });
    await releaseAll(limited);

    // One in flight there already: one more; two in flight: none, and the other receiver still gets its share.
    const oneBusy = await claim({ perReceiverLimit: 2, busyReceivers: new Map([['https://shared.example', 1]]) });
    expect(countBy(oneBusy, receiverOf)).toEqual({ shared: 1, other: 2 });
    await releaseAll(oneBusy);
    const full = await claim({ perReceiverLimit: 2, busyReceivers: new Map([['https://shared.example', 2]]) });
    expect(countBy(full, receiverOf)).toEqual({ other: 2 });
    await releaseAll(full);
    expect(shared).toHaveLength(3);
  });

  it("keeps to perTeamLimit across one team's receivers, less what is busy for it; another team keeps its share", async () => {
    // Team red: three receivers (as three hanging ones would be); team blue: one.
    for (const host of ['red-1', 'red-2', 'red-3']) {
      await createWebhook(client.prisma, testWebhook({ url: `https://${host}.example/hooks`, team: 'red' }));
    }
    await createWebhook(client.prisma, testWebhook({ url: 'https://blue.example/hooks', team: 'blue' }));
    await insertPlantsFannedOut(
      client.sql,
      [1n, 2n, 3n].map((id) => ({ id, name: `plant ${id}` })),
    );
    const releaseAll = (claims: readonly ClaimedDelivery[]) =>
      Promise.all(claims.map((claimed) => releaseClaim(client.sql, claimed)));
    const byTeam = (claims: readonly ClaimedDelivery[]) => countBy(claims, (claimed) => claimed.team);

    // Nine due for red, three for blue: red gets its four, blue all of its three.
    const limited = await claim({ perTeamLimit: 4 });
    expect(byTeam(limited)).toEqual({ red: 4, blue: 3 });
    await releaseAll(limited);
    // Red with three in flight already: one more; with four: none, and blue still gets its share.
    const oneLeft = await claim({ perTeamLimit: 4, busyTeams: new Map([['red', 3]]) });
    expect(byTeam(oneLeft)).toEqual({ red: 1, blue: 3 });
    await releaseAll(oneLeft);
    const full = await claim({ perTeamLimit: 4, busyTeams: new Map([['red', 4]]) });
    expect(byTeam(full)).toEqual({ blue: 3 });
    await releaseAll(full);
    // Without a team limit, every due delivery.
    expect(byTeam(await claim())).toEqual({ red: 9, blue: 3 });
  });

  it('scans none of the deliveries of a receiver with no room left, however many subscriptions point at it', async () => {
    for (const path of ['a', 'b', 'c'])
      await createWebhook(client.prisma, testWebhook({ url: `https://shared.example/${path}` }));
    const other = await createWebhook(client.prisma, testWebhook({ url: 'https://other.example/hooks' }));
    await insertPlantsFannedOut(
      client.sql,
      [1n, 2n].map((id) => ({ id, name: `plant ${id}` })),
    );
    // The statement claimDeliveries sends, the shared receiver full (room 0), under EXPLAIN ANALYZE.
    const plan = await explainClaim([
      1_000,
      1_000,
      [],
      60_000,
      2,
      ['https://shared.example'],
      [0],
      [],
      [],
      1_000,
      [],
      [],
    ]);
    // Per receiver, a scan of its due deliveries under a limit: run for the other receiver only;
    // the full one (three subscriptions) stops at its limit of 0 before scanning.
    const scans = plan.filter((node) => node.Alias === 'due_deliveries');
    expect(scans.length).toBeGreaterThan(0);
    expect(scans.reduce((loops, node) => loops + node['Actual Loops'], 0)).toBe(1);
    // And what it claimed: the other receiver's two, none of the full one's six.
    const leased = await client.rows<{ subscription_id: string }>(
      'SELECT subscription_id::text AS subscription_id FROM webhook_deliveries WHERE lease_id IS NOT NULL',
    );
    expect(leased.map((delivery) => delivery.subscription_id)).toEqual([other.id, other.id]);
  });

  it('reads one scan of a receiver, however many subscriptions point at it: 100 cost what 1 does', async () => {
    await client.sql.query(
      `INSERT INTO webhook_subscriptions (url, secret)
       SELECT 'https://Shared.example:443/hooks/' || n, 'whsec_dGVzdA==' FROM generate_series(1, 100) AS n`,
      [],
    );
    await insertPlantsFannedOut(
      client.sql,
      [1n, 2n, 3n].map((id) => ({ id, name: `plant ${id}` })),
    );
    const plan = await explainClaim([1_000, 1_000, [], 60_000, 4, [], [], [], [], 1_000, [], []]);
    // 300 due deliveries of one receiver with room for 4: one index scan, stopped at 4 rows (how
    // the 4 are then locked, on a table this small, is the planner's choice: see the next test).
    const scans = plan.filter((node) => node.Alias === 'due_deliveries');
    expect(scans.length).toBeGreaterThan(0);
    expect(scans.reduce((loops, node) => loops + node['Actual Loops'], 0)).toBe(1);
    const read = scans.reduce((rows, node) => rows + node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0), 0);
    expect(read).toBe(4);
    expect(
      await client.rows('SELECT count(*)::int AS leased FROM webhook_deliveries WHERE lease_id IS NOT NULL'),
    ).toEqual([{ leased: 4 }]);
  });

  it('locks what it claims by primary key: a few claimed cost a few rows read, however long the backlog', async () => {
    await seed(
      client,
      1,
      Array.from({ length: 2_000 }, (_, index) => BigInt(index + 1)),
    );
    // Statistics taken while nothing was pending, then a backlog of 2,000: a planner trusting
    // them reads the pending index whole to find the few candidates (83 ms a claim at 12,000
    // pending, measured) unless the statement leaves it only the primary key.
    await client.sql.query("UPDATE webhook_deliveries SET status = 'delivered'", []);
    await client.sql.query('ANALYZE webhook_deliveries', []);
    await client.sql.query("UPDATE webhook_deliveries SET status = 'pending'", []);
    const plan = await explainClaim([5, 5, [], 60_000, 5, [], [], [], [], 5, [], []]);
    const read = plan
      .filter((node) => node['Relation Name'] === 'webhook_deliveries')
      .map((node) => ({
        alias: node.Alias ?? '',
        rows: (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0)) * node['Actual Loops'],
      }));
    // The subscription's scan stops at its limit; the lock and the update each visit the five.
    expect(read.length).toBeGreaterThan(0);
    for (const { alias, rows } of read) expect(rows, alias).toBeLessThanOrEqual(5);
    const leased = await client.rows<{ leased: number }>(
      'SELECT count(*)::int AS leased FROM webhook_deliveries WHERE lease_id IS NOT NULL',
    );
    expect(leased).toEqual([{ leased: 5 }]);
  });

  it('records a delivered attempt: done, lease given back, attempt listed', async () => {
    const [webhook] = await seed(client, 1, [1n]);
    const [claimed] = await claim();
    if (!claimed || !webhook) throw new Error('a claim expected');
    const attemptedAt = new Date(Date.now() - 50);
    expect(await recordAttempt(client.sql, claimed, delivered(attemptedAt))).toBe(true);
    const page = await listDeliveries(client.prisma, webhook.id, { limit: 10 });
    expect(page?.deliveries).toEqual([
      {
        id: claimed.deliveryId,
        webhookId: webhook.id,
        eventId: claimed.eventId,
        eventType: 'plant.created',
        plantId: 1n,
        status: 'delivered',
        nextAttemptAt: null,
        createdAt: expect.any(Date),
        deliveredAt: expect.any(Date),
        attempts: [{ attemptedAt, statusCode: 204, latencyMs: 12, error: null, responseExcerpt: null }],
      },
    ]);
    expect(await claim()).toEqual([]);
    // The lease ended with the attempt: recording under it again writes nothing.
    expect(await recordAttempt(client.sql, claimed, delivered())).toBe(false);
    expect((await listDeliveries(client.prisma, webhook.id, { limit: 10 }))?.deliveries[0]?.attempts).toHaveLength(1);
  });

  it('retries a failed attempt at retryAt, then fails the delivery when no retry is left', async () => {
    const [webhook] = await seed(client, 1, [1n]);
    const [first] = await claim();
    if (!first || !webhook) throw new Error('a claim expected');
    const later = new Date(Date.now() + 60_000);
    expect(await recordAttempt(client.sql, first, failed(later))).toBe(true);
    const [pending] = (await listDeliveries(client.prisma, webhook.id, { limit: 10 }))?.deliveries ?? [];
    expect(pending).toMatchObject({ status: 'pending', nextAttemptAt: later, deliveredAt: null });
    // Not due before retryAt.
    expect(await claim()).toEqual([]);

    await client.sql.query('UPDATE webhook_deliveries SET next_attempt_at = now()', []);
    const [second] = await claim();
    expect(second).toMatchObject({ deliveryId: first.deliveryId, eventId: first.eventId, attemptNumber: 2 });
    if (!second) throw new Error('a second claim expected');
    expect(await recordAttempt(client.sql, second, failed(null, null))).toBe(true);
    const [done] = (await listDeliveries(client.prisma, webhook.id, { limit: 10 }))?.deliveries ?? [];
    expect(done).toMatchObject({ status: 'failed', nextAttemptAt: null, deliveredAt: null });
    expect(done?.attempts).toEqual([
      {
        attemptedAt: expect.any(Date),
        statusCode: 500,
        latencyMs: 3_000,
        error: 'answered 500',
        responseExcerpt: '{"status":500}',
      },
      {
        attemptedAt: expect.any(Date),
        statusCode: null,
        latencyMs: 3_000,
        error: 'connection refused',
        responseExcerpt: null,
      },
    ]);
    expect(await claim()).toEqual([]);
  });

  it('lets another claim take an expired lease; the old holder then records nothing', async () => {
    await seed(client, 1, [1n]);
    const [stale] = await claim({ leaseMs: 100 });
    if (!stale) throw new Error('a claim expected');
    expect(await claim()).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const [fresh] = await claim();
    expect(fresh).toMatchObject({ deliveryId: stale.deliveryId, attemptNumber: 1 });
    if (!fresh) throw new Error('a second claim expected');
    expect(fresh.leaseId).not.toBe(stale.leaseId);
    expect(await recordAttempt(client.sql, stale, delivered())).toBe(false);
    // Releasing a lost lease does not free the new holder's.
    await releaseClaim(client.sql, stale);
    expect(await claim()).toEqual([]);
    expect(await client.rows('SELECT id FROM webhook_attempts')).toEqual([]);
    expect(await recordAttempt(client.sql, fresh, delivered())).toBe(true);
  });

  it('gives a lease back on release: due again at once, same attempt number', async () => {
    await seed(client, 1, [1n]);
    const [held] = await claim();
    if (!held) throw new Error('a claim expected');
    await releaseClaim(client.sql, held);
    const [again] = await claim();
    expect(again).toMatchObject({ deliveryId: held.deliveryId, attemptNumber: 1 });
    expect(await recordAttempt(client.sql, held, delivered())).toBe(false);
  });

  it('records attempts finishing together in one statement, each judged by its own lease', async () => {
    await seed(client, 1, [1n, 2n, 3n, 4n, 5n]);
    const claims = await claim();
    expect(claims).toHaveLength(5);
    let statements = 0;
    const recorder = createAttemptRecorder(
      {
        query(text, values) {
          statements++;
          return client.sql.query(text, values);
        },
      },
      { maxBatchSize: 256 },
    );
    // The third lost its lease meanwhile (another dispatcher's, after it expired).
    const stolen = claims[2];
    if (!stolen) throw new Error('claims expected');
    const outcomes = await Promise.all(
      claims.map((claimed) =>
        recorder.record(claimed === stolen ? { ...claimed, leaseId: crypto.randomUUID() } : claimed, delivered()),
      ),
    );
    expect(outcomes).toEqual([true, true, false, true, true]);
    // The first alone (nothing was in flight), the other four together.
    expect(statements).toBe(2);
    const statuses = await client.rows<{ status: string; attempts: number }>(
      `SELECT status, (SELECT count(*)::int FROM webhook_attempts WHERE delivery_id = webhook_deliveries.id) AS attempts
       FROM webhook_deliveries ORDER BY id`,
    );
    expect(statuses).toEqual([
      { status: 'delivered', attempts: 1 },
      { status: 'delivered', attempts: 1 },
      { status: 'pending', attempts: 0 },
      { status: 'delivered', attempts: 1 },
      { status: 'delivered', attempts: 1 },
    ]);
  });

  it('with lingerMs, records attempts finishing one by one in one statement', async () => {
    await seed(client, 1, [1n, 2n, 3n, 4n]);
    const claims = await claim();
    expect(claims).toHaveLength(4);
    const counted = (lingerMs: number) => {
      const counter = { statements: 0 };
      const recorder = createAttemptRecorder(
        {
          query(text, values) {
            counter.statements++;
            return client.sql.query(text, values);
          },
        },
        { maxBatchSize: 256, lingerMs },
      );
      return { counter, recorder };
    };
    // Attempts finishing one after another: each alone without a linger (each recorded before
    // the next finishes), all four in one with 200 ms (10 ms apart).
    const eager = counted(0);
    for (const claimed of claims) expect(await eager.recorder.record(claimed, failed(new Date()))).toBe(true);
    expect(eager.counter.statements).toBe(4);
    const recordApart = async (recorder: ReturnType<typeof counted>['recorder'], batch: readonly ClaimedDelivery[]) => {
      const recorded: Promise<boolean>[] = [];
      for (const claimed of batch) {
        recorded.push(recorder.record(claimed, failed(new Date())));
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return Promise.all(recorded);
    };

    const again = await claim();
    expect(again).toHaveLength(4);
    const lingering = counted(200);
    expect(await recordApart(lingering.recorder, again)).toEqual([true, true, true, true]);
    expect(lingering.counter.statements).toBe(1);
    expect(
      await client.rows(
        'SELECT count(*)::int AS attempts, count(DISTINCT delivery_id)::int AS deliveries FROM webhook_attempts',
      ),
    ).toEqual([{ attempts: 8, deliveries: 4 }]);
  });

  it('answers false when the delivery went with its webhook during the attempt', async () => {
    const [webhook] = await seed(client, 1, [1n]);
    const [held] = await claim();
    if (!held || !webhook) throw new Error('a claim expected');
    expect(await deleteWebhook(client.prisma, webhook.id, { actor: TEST_ACTOR })).toBe(true);
    expect(await recordAttempt(client.sql, held, delivered())).toBe(false);
    await expect(releaseClaim(client.sql, held)).resolves.toBeUndefined();
    expect(await client.rows('SELECT id FROM webhook_attempts')).toEqual([]);
  });
});

describe.each(testEngines().filter((engine) => engine === 'postgres'))('claims across replicas on %s', (engine) => {
  let storage: TestStorage;
  const replicas: TestClient[] = [];
  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    for (let index = 0; index < 2; index++) replicas.push(await openTestClient(storage));
  });
  afterAll(async () => {
    for (const replica of replicas) await replica.close();
    await storage?.dispose();
  });

  it('never leases one delivery twice to concurrent claimers on two pools', async () => {
    const [first] = replicas as [TestClient, TestClient];
    const ids = Array.from({ length: 100 }, (_, index) => BigInt(index + 1));
    await seed(first, 4, ids);
    const claimed: bigint[] = [];
    // Four claimers per replica, each claiming small batches until nothing is left.
    await Promise.all(
      replicas.flatMap((replica) =>
        Array.from({ length: 4 }, async () => {
          for (;;) {
            const claims = await claimDeliveries(replica.sql, {
              limit: 7,
              perWebhookLimit: 3,
              leaseMs: 60_000,
            });
            // SKIP LOCKED can come back empty-handed while others hold the rest: ask the table.
            if (claims.length === 0) {
              const [left] = await replica.rows<{ count: number }>(
                'SELECT count(*)::int AS count FROM webhook_deliveries WHERE lease_id IS NULL',
              );
              if (left?.count === 0) return;
            }
            claimed.push(...claims.map((claim) => claim.deliveryId));
          }
        }),
      ),
    );
    expect(claimed).toHaveLength(400);
    expect(new Set(claimed).size).toBe(400);
  });
});
