import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type AttemptOutcome,
  type ClaimedDelivery,
  DatabaseUnavailableError,
  type FanOutResult,
  receiverOrigin,
} from '@plant-store/db';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { waitUntil } from '../test-support/wait-until.js';
import { startWebhookReceiver, type WebhookReceiver } from '../test-support/webhook-receiver.js';
import {
  type AttemptResult,
  createWebhookDispatcher,
  type DeliveryStore,
  type WebhookDispatcher,
  type WebhookDispatcherOptions,
} from './dispatcher.js';

interface FakeDelivery {
  readonly id: bigint;
  readonly webhookId: string;
  readonly url: string;
  readonly secrets: readonly string[];
  readonly eventId: string;
  readonly payload: string;
  status: 'pending' | 'delivered' | 'failed';
  dueAt: number;
  attempts: AttemptOutcome[];
  lease: { id: string; expiresAt: number } | undefined;
}

/**
 * The store's contract in memory, for the dispatcher's unit tests: due deliveries in id order,
 * leases, per-webhook limits and exclusions. The real one (SQL, SKIP LOCKED) is tested in
 * packages/db and end to end.
 */
class FakeStore implements DeliveryStore {
  readonly deliveries: FakeDelivery[] = [];
  readonly released: ClaimedDelivery[] = [];
  /** Events not fanned out yet: the subscriptions they go to, and the plant. */
  readonly events: Array<{ readonly webhooks: readonly Subscription[]; readonly plantId: bigint }> = [];
  claimCalls = 0;
  fanOutCalls = 0;
  /** Throw DatabaseUnavailableError from claimDeliveries while set. */
  unavailable = false;
  /** Throw DatabaseUnavailableError from fanOutEvents while set. */
  fanOutUnavailable = false;
  /** Answer recordAttempt with false (the lease was taken over) while set. */
  leasesLost = false;
  /** How long a claim's answer, made when asked, takes to come back (a database round trip). */
  claimDelayMs = 0;
  /**
   * How long recording attempts takes: each joins the group waiting, and a group is written this
   * long after its first attempt, all of it at once (as the database's recorder does).
   */
  recordDelayMs = 0;
  private recordGroup: Promise<void> | undefined;
  /** Most deliveries at once fanned out and not yet claimed for a first attempt, seen after each fan-out. */
  mostWaiting = 0;
  private nextId = 1n;

  add(webhook: Subscription, plantId: bigint, eventId = `msg_${randomUUID()}`): FakeDelivery {
    const delivery: FakeDelivery = {
      id: this.nextId++,
      webhookId: webhook.id,
      url: webhook.url,
      secrets: [webhook.secret],
      eventId,
      payload: `{"id":${plantId},"name":"Monstera"}`,
      status: 'pending',
      dueAt: 0,
      attempts: [],
      lease: undefined,
    };
    this.deliveries.push(delivery);
    return delivery;
  }

  /** Subscriptions that exist: those of every event published so far, and any subscribed alone. */
  readonly subscriptions = new Set<Subscription>();
  receiverCalls = 0;

  /** An event to fan out to `webhooks` (a create's outbox row). */
  publish(webhooks: readonly Subscription[], plantId: bigint): void {
    for (const webhook of webhooks) this.subscriptions.add(webhook);
    this.events.push({ webhooks, plantId });
  }

  async webhookReceivers(): Promise<string[]> {
    this.receiverCalls += 1;
    return [...new Set([...this.subscriptions].map((webhook) => receiverOrigin(webhook.url)))];
  }

  /** One event a call: the dispatcher must keep going while events are waiting. */
  /** The most deliveries each fan-out asked for, in order. */
  readonly fanOutBatches: number[] = [];

  async fanOutEvents({ maxDeliveries }: { readonly maxDeliveries: number }): Promise<FanOutResult> {
    this.fanOutCalls += 1;
    this.fanOutBatches.push(maxDeliveries);
    if (this.fanOutUnavailable) throw new DatabaseUnavailableError();
    const event = this.events.shift();
    if (event === undefined) return { events: 0, deliveries: 0, deliveriesByReceiver: new Map() };
    const eventId = `msg_${randomUUID()}`;
    const deliveriesByReceiver = new Map<string, number>();
    for (const webhook of event.webhooks) {
      this.add(webhook, event.plantId, eventId);
      const receiver = receiverOrigin(webhook.url);
      deliveriesByReceiver.set(receiver, (deliveriesByReceiver.get(receiver) ?? 0) + 1);
    }
    const waiting = this.deliveries.filter((delivery) => delivery.attempts.length === 0 && !delivery.lease).length;
    this.mostWaiting = Math.max(this.mostWaiting, waiting);
    return { events: 1, deliveries: event.webhooks.length, deliveriesByReceiver };
  }

  async claimDeliveries(options: Parameters<DeliveryStore['claimDeliveries']>[0]): Promise<ClaimedDelivery[]> {
    this.claimCalls += 1;
    if (this.unavailable) throw new DatabaseUnavailableError();
    const now = Date.now();
    const perWebhook = new Map<string, number>();
    const perReceiver = new Map<string, number>();
    const claims: ClaimedDelivery[] = [];
    for (const delivery of this.deliveries) {
      if (claims.length >= options.limit) break;
      if (delivery.status !== 'pending' || delivery.dueAt > now) continue;
      if (delivery.lease && delivery.lease.expiresAt > now) continue;
      if (options.excludeWebhookIds?.includes(delivery.webhookId)) continue;
      const taken = perWebhook.get(delivery.webhookId) ?? options.busyWebhooks?.get(delivery.webhookId) ?? 0;
      if (taken >= options.perWebhookLimit) continue;
      const receiver = receiverOrigin(delivery.url);
      const takenByReceiver = perReceiver.get(receiver) ?? options.busyReceivers?.get(receiver) ?? 0;
      if (takenByReceiver >= (options.perReceiverLimit ?? Number.POSITIVE_INFINITY)) continue;
      perWebhook.set(delivery.webhookId, taken + 1);
      perReceiver.set(receiver, takenByReceiver + 1);
      delivery.lease = { id: randomUUID(), expiresAt: now + options.leaseMs };
      claims.push({
        deliveryId: delivery.id,
        team: 'default',
        leaseId: delivery.lease.id,
        leaseExpiresAt: new Date(delivery.lease.expiresAt),
        eventId: delivery.eventId,
        webhookId: delivery.webhookId,
        url: delivery.url,
        secrets: delivery.secrets,
        payload: delivery.payload,
        traceParent: null,
        attemptNumber: delivery.attempts.length + 1,
      });
    }
    if (this.claimDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.claimDelayMs));
    return claims;
  }

  async recordAttempt(claim: ClaimedDelivery, outcome: AttemptOutcome): Promise<boolean> {
    if (this.recordDelayMs > 0) {
      this.recordGroup ??= new Promise<void>((resolve) =>
        setTimeout(() => {
          this.recordGroup = undefined;
          resolve();
        }, this.recordDelayMs),
      );
      await this.recordGroup;
    }
    const delivery = this.find(claim);
    if (this.leasesLost || delivery?.lease?.id !== claim.leaseId) return false;
    delivery.attempts.push(outcome);
    delivery.status = outcome.delivered ? 'delivered' : outcome.retryAt === null ? 'failed' : 'pending';
    delivery.dueAt = outcome.retryAt?.getTime() ?? 0;
    delivery.lease = undefined;
    return true;
  }

  async releaseClaim(claim: ClaimedDelivery): Promise<void> {
    const delivery = this.find(claim);
    if (delivery?.lease?.id !== claim.leaseId) return;
    delivery.lease = undefined;
    this.released.push(claim);
  }

  private find(claim: ClaimedDelivery): FakeDelivery | undefined {
    return this.deliveries.find((delivery) => delivery.id === claim.deliveryId);
  }
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function receiver(): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver();
  cleanups.push(() => started.close());
  return started;
}

interface Subscription {
  readonly id: string;
  readonly url: string;
  readonly secret: string;
}

function subscription(url: string): Subscription {
  return { id: randomUUID(), url, secret: `whsec_${randomBytes(32).toString('base64')}` };
}

interface Harness {
  readonly dispatcher: WebhookDispatcher;
  readonly logs: Array<Record<string, unknown>>;
  readonly results: AttemptResult[];
}

function dispatch(store: FakeStore, options: Partial<WebhookDispatcherOptions> = {}): Harness {
  const logs: Array<Record<string, unknown>> = [];
  const results: AttemptResult[] = [];
  const dispatcher = createWebhookDispatcher({
    store,
    retryScheduleMs: [50, 100],
    timeoutMs: 2_000,
    pollMs: 20,
    leaseMs: 10_000,
    concurrency: 4,
    perWebhookConcurrency: 2,
    allowPrivateNetworks: true,
    log: createLogger({ level: 'debug', destination: { write: (line) => logs.push(JSON.parse(line)) } }),
    random: () => 0.5,
    observeAttempt: (result) => results.push(result),
    ...options,
    // Every subscription here is one team's: its share is every slot (the team caps are
    // delivery-slots.test.ts's and webhook-delivery.test.ts's).
    perTeamConcurrency: options.perTeamConcurrency ?? options.concurrency ?? 4,
  });
  cleanups.push(() => dispatcher.close());
  dispatcher.start();
  return { dispatcher, logs, results };
}

/** 4 slots, one per webhook, the fan-out paced at 3 waiting per receiver; polled every `pollMs`. */
function pacedFanOut(pollMs: number): Partial<WebhookDispatcherOptions> {
  return { concurrency: 4, perWebhookConcurrency: 1, fanOutAhead: 3, pollMs, drainMs: 50 };
}

/** 8 slots and 4 per receiver, 2 receivers' slots while `busy`; attempts hang up to 5 s. */
function busySpells(busy: () => boolean): Partial<WebhookDispatcherOptions> {
  return { busy, busyConcurrency: 2, concurrency: 8, perWebhookConcurrency: 4, timeoutMs: 5_000, drainMs: 50 };
}

describe('createWebhookDispatcher', () => {
  it('delivers a due delivery, signed, with the exact body, and records it as delivered', async () => {
    const hooks = await receiver();
    const store = new FakeStore();
    const webhook = subscription(hooks.url);
    const delivery = store.add(webhook, 9_007_199_254_740_993n);
    const { logs, results } = dispatch(store);

    const [received] = await hooks.waitFor(1);
    expect(received?.body).toBe('{"id":9007199254740993,"name":"Monstera"}');
    expect(received?.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'plant-store-webhooks/1',
      'webhook-id': delivery.eventId,
    });
    expect(() =>
      new Webhook(webhook.secret).verify(received?.body ?? '', received?.headers ?? {}, { jsonParse: false }),
    ).not.toThrow();

    await waitUntil(() => delivery.status === 'delivered');
    expect(delivery.attempts).toEqual([
      expect.objectContaining({ statusCode: 200, error: null, delivered: true, retryAt: null }),
    ]);
    expect(results).toEqual(['delivered']);
    const line = logs.find((entry) => entry.message === 'webhook attempt');
    expect(line).toMatchObject({
      level: 'debug',
      webhookId: webhook.id,
      eventId: delivery.eventId,
      deliveryId: '1',
      status: 200,
      outcome: 'delivered',
    });
  });

  it('retries on the schedule, signing each attempt afresh, then gives up', async () => {
    const hooks = await receiver();
    hooks.answer(() => 500);
    const store = new FakeStore();
    const webhook = subscription(hooks.url);
    const delivery = store.add(webhook, 1n);
    const { logs, results } = dispatch(store, { retryScheduleMs: [50, 150] });

    await waitUntil(() => delivery.status === 'failed');
    expect(delivery.attempts.map(({ statusCode, error, delivered }) => ({ statusCode, error, delivered }))).toEqual(
      Array(3).fill({ statusCode: 500, error: 'HTTP 500', delivered: false }),
    );
    const [first, second, third] = delivery.attempts;
    // random() = 0.5: no jitter, the schedule exactly.
    expect((first?.retryAt?.getTime() ?? 0) - (first?.attemptedAt.getTime() ?? 0)).toBeGreaterThanOrEqual(50);
    expect((second?.retryAt?.getTime() ?? 0) - (second?.attemptedAt.getTime() ?? 0)).toBeGreaterThanOrEqual(150);
    expect(third?.retryAt).toBeNull();
    const received = hooks.received;
    expect(received).toHaveLength(3);
    expect((received[1]?.receivedAt ?? 0) - (received[0]?.receivedAt ?? 0)).toBeGreaterThanOrEqual(45);
    expect((received[2]?.receivedAt ?? 0) - (received[1]?.receivedAt ?? 0)).toBeGreaterThanOrEqual(145);
    for (const request of received) {
      expect(request.headers['webhook-id']).toBe(delivery.eventId);
      expect(() =>
        new Webhook(webhook.secret).verify(request.body, request.headers, { jsonParse: false }),
      ).not.toThrow();
    }
    expect(results).toEqual(['retrying', 'retrying', 'failed']);

    // Given up: no fourth attempt.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(hooks.received).toHaveLength(3);
    const gaveUp = logs.filter((entry) => entry.level === 'warn');
    expect(gaveUp).toEqual([
      expect.objectContaining({
        message: 'webhook delivery failed: no attempts left',
        webhookId: webhook.id,
        eventId: delivery.eventId,
        deliveryId: '1',
        status: 500,
        error: 'HTTP 500',
        attempt: 3,
      }),
    ]);
    // Ids and outcomes only: never the secret, a signature or the body.
    const text = JSON.stringify(logs);
    expect(text).not.toContain(webhook.secret.slice(6));
    expect(text).not.toContain('v1,');
    expect(text).not.toContain('Monstera');
  });

  it('stops retrying once an attempt succeeds', async () => {
    const hooks = await receiver();
    hooks.answer((_, index) => (index === 0 ? 503 : 204));
    const store = new FakeStore();
    const delivery = store.add(subscription(hooks.url), 1n);
    const { results } = dispatch(store);
    await waitUntil(() => delivery.status === 'delivered');
    expect(delivery.attempts.map((attempt) => attempt.statusCode)).toEqual([503, 204]);
    expect(results).toEqual(['retrying', 'delivered']);
  });

  it('records a refused address as a failed attempt, without connecting', async () => {
    const hooks = await receiver();
    const store = new FakeStore();
    const delivery = store.add(subscription(hooks.url), 1n);
    dispatch(store, { allowPrivateNetworks: false, retryScheduleMs: [60_000] });
    await waitUntil(() => delivery.attempts.length === 1);
    expect(delivery.attempts[0]).toMatchObject({
      statusCode: null,
      error:
        'address not allowed (loopback 127.0.0.1); set WEBHOOKS_ALLOW_PRIVATE_NETWORKS=true for receivers on private networks',
      delivered: false,
    });
    expect(delivery.status).toBe('pending');
    expect(hooks.received).toHaveLength(0);
  });

  it('keeps a hanging receiver from delaying deliveries to another one', async () => {
    const slow = await receiver();
    slow.answer(() => 'hang');
    const fast = await receiver();
    const store = new FakeStore();
    const slowHook = subscription(slow.url);
    const fastHook = subscription(fast.url);
    const stuck = [store.add(slowHook, 1n), store.add(slowHook, 2n), store.add(slowHook, 3n)];
    const quick = [store.add(fastHook, 4n), store.add(fastHook, 5n), store.add(fastHook, 6n)];
    dispatch(store, { timeoutMs: 3_000, perWebhookConcurrency: 2, pollMs: 60_000, drainMs: 50 });

    await waitUntil(() => quick.every((delivery) => delivery.status === 'delivered'));
    // Two in flight to the slow one (its cap), the third waiting for them; none recorded yet:
    // the fast ones were delivered before any slow attempt ended (by its 3 s timeout).
    expect(slow.received).toHaveLength(2);
    expect(stuck.every((delivery) => delivery.attempts.length === 0)).toBe(true);
  });

  it('keeps at most `concurrency` deliveries in flight', async () => {
    const hanging = await Promise.all([receiver(), receiver(), receiver()]);
    const store = new FakeStore();
    for (const [index, hooks] of hanging.entries()) {
      hooks.answer(() => 'hang');
      store.add(subscription(hooks.url), BigInt(index));
    }
    dispatch(store, { concurrency: 2, timeoutMs: 5_000, drainMs: 50 });
    await waitUntil(() => hanging.reduce((sum, hooks) => sum + hooks.received.length, 0) === 2);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(hanging.reduce((sum, hooks) => sum + hooks.received.length, 0)).toBe(2);
  });

  it('gives way while the process is busy: busyConcurrency in flight, one per receiver; all caps again after', async () => {
    const hanging = await Promise.all([receiver(), receiver(), receiver()]);
    const store = new FakeStore();
    for (const [index, hooks] of hanging.entries()) {
      hooks.answer(() => 'hang');
      const webhook = subscription(hooks.url);
      store.add(webhook, BigInt(2 * index));
      store.add(webhook, BigInt(2 * index + 1));
    }
    let busy = true;
    dispatch(store, { ...busySpells(() => busy) });
    const inFlight = () => hanging.map((hooks) => hooks.received.length);
    await waitUntil(() => inFlight().reduce((sum, count) => sum + count, 0) === 2);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Two in all (busyConcurrency), never two to one receiver, though each has room for 4.
    expect(inFlight().reduce((sum, count) => sum + count, 0)).toBe(2);
    expect(Math.max(...inFlight())).toBe(1);

    busy = false;
    // The next poll claims and starts the rest: both of each receiver's deliveries in flight.
    await waitUntil(() => inFlight().every((count) => count === 2));
  });

  it('keeps a receiver that hangs with more in flight than a busy spell allows to one receiver slot', async () => {
    const stuck = await receiver();
    stuck.answer(() => 'hang');
    const healthy = await receiver();
    const store = new FakeStore();
    const stuckHook = subscription(stuck.url);
    for (let index = 0; index < 6; index++) store.add(stuckHook, BigInt(index));
    let busy = false;
    dispatch(store, { ...busySpells(() => busy) });
    // Four hanging (its cap), then the process turns busy: 4 in flight, 2 slots while busy.
    await stuck.waitFor(4, 2_000);
    busy = true;
    const healthyHook = subscription(healthy.url);
    const quick = [store.add(healthyHook, 10n), store.add(healthyHook, 11n)];
    // The healthy receiver still gets its deliveries (one at a time), long before the 5 s timeout.
    await waitUntil(() => quick.every((delivery) => delivery.status === 'delivered'), 2_000);
    expect(stuck.received).toHaveLength(4);
  });

  it('is not woken by creates while busy: the poll and finished deliveries drive it', async () => {
    const hooks = await receiver();
    const store = new FakeStore();
    const webhook = subscription(hooks.url);
    let busy = true;
    const { dispatcher } = dispatch(store, { busy: () => busy, pollMs: 60_000 });
    await waitUntil(() => store.claimCalls === 1);
    store.publish([webhook], 1n);
    dispatcher.nudge();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect({ fanOuts: store.fanOutCalls, claims: store.claimCalls, received: hooks.received.length }).toEqual({
      fanOuts: 1,
      claims: 1,
      received: 0,
    });

    busy = false;
    dispatcher.nudge();
    await hooks.waitFor(1, 2_000);
  });

  it('claims again as soon as slow recordings catch up, not at the next poll', async () => {
    const hooks = await receiver();
    const store = new FakeStore();
    store.recordDelayMs = 50;
    const webhook = subscription(hooks.url);
    const deliveries = Array.from({ length: 40 }, (_, index) => store.add(webhook, BigInt(index)));
    // One slot: the attempts waiting to be recorded soon reach their bound, and claims wait for
    // the recordings; each one recorded must let the loop claim again (it never polls here).
    dispatch(store, { concurrency: 1, perWebhookConcurrency: 1, pollMs: 60_000 });
    await waitUntil(() => deliveries.every((delivery) => delivery.status === 'delivered'), 10_000);
  });

  it('claims at once when nudged, and after each finished delivery, not only when it polls', async () => {
    const hooks = await receiver();
    const store = new FakeStore();
    const webhook = subscription(hooks.url);
    const { dispatcher } = dispatch(store, { pollMs: 60_000, perWebhookConcurrency: 1 });
    await waitUntil(() => store.claimCalls === 1);

    const deliveries = [store.add(webhook, 1n), store.add(webhook, 2n), store.add(webhook, 3n)];
    dispatcher.nudge();
    // One at a time (perWebhookConcurrency 1): each finished delivery sets off the next claim.
    await waitUntil(() => deliveries.every((delivery) => delivery.status === 'delivered'), 2_000);
    expect(hooks.received.map((request) => request.body)).toEqual(deliveries.map((delivery) => delivery.payload));
  });

  it('fans out waiting events when it starts, when nudged and when it polls, each before it claims', async () => {
    const hooks = await receiver();
    const store = new FakeStore();
    const webhooks = [subscription(hooks.url), subscription(hooks.url)];
    // Written before the dispatcher started (another replica's, or before a restart).
    store.publish(webhooks, 1n);
    store.publish(webhooks, 2n);
    const { dispatcher } = dispatch(store, { pollMs: 60_000 });
    await hooks.waitFor(4);

    store.publish(webhooks, 3n);
    dispatcher.nudge();
    await hooks.waitFor(6);
    const bodies = hooks.received.map((request) => request.body);
    for (const id of [1, 2, 3]) expect(bodies.filter((body) => body.includes(`"id":${id},`))).toHaveLength(2);
    // Each event once to each of its subscriptions, under one webhook-id.
    const eventIds = new Set(hooks.received.map((request) => request.headers['webhook-id']));
    expect(eventIds.size).toBe(3);

    const polling = new FakeStore();
    dispatch(polling, { pollMs: 20 });
    await waitUntil(() => polling.fanOutCalls >= 1);
    // Not nudged: found by the next poll.
    polling.publish([subscription(hooks.url)], 4n);
    await hooks.waitFor(7);
    expect(hooks.received.at(-1)?.body).toContain('"id":4,');
  });

  it('fans out no faster than it delivers: at most fanOutAhead deliveries wait for a first attempt', async () => {
    const slow = await receiver();
    slow.answer(() => 'hang');
    const store = new FakeStore();
    const webhooks = [subscription(slow.url), subscription(slow.url), subscription(slow.url)];
    for (let plant = 1n; plant <= 10n; plant++) store.publish(webhooks, plant);
    // One slot, held by the hanging receiver; three deliveries an event.
    const { dispatcher } = dispatch(store, { concurrency: 1, fanOutAhead: 3, pollMs: 10, drainMs: 50 });
    await slow.waitFor(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    dispatcher.nudge();
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The first event's three (one of them claimed), then a second event's: 5 fanned out and not
    // yet claimed would pass fanOutAhead, so the other eight events wait in the outbox.
    expect(store.events).toHaveLength(8);
    expect(store.deliveries).toHaveLength(6);
  });

  it('fans out, while busy, only what the busy deliveries take next; the whole backlog once the requests stop', async () => {
    const stuck = await receiver();
    stuck.answer(() => 'hang');
    const store = new FakeStore();
    // 40 subscriptions of one receiver: an event is 40 deliveries, more than a busy fan-out's 32.
    const webhooks = Array.from({ length: 40 }, () => subscription(stuck.url));
    for (let plant = 1n; plant <= 10n; plant++) store.publish(webhooks, plant);
    let busy = true;
    dispatch(
      store,
      busySpells(() => busy),
    );
    await stuck.waitFor(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // One event: its 40 deliveries, 8 of them claimed (the busy look-ahead), leave 32 waiting,
    // which stops the fan-out while busy, poll after poll. Every statement asked for 32 at most.
    expect({ events: store.events.length, deliveries: store.deliveries.length }).toEqual({
      events: 9,
      deliveries: 40,
    });
    expect(new Set(store.fanOutBatches)).toEqual(new Set([32]));

    busy = false;
    // Not busy: the default batch (1024) and pace (2048 waiting) take every event at the next poll.
    await waitUntil(() => store.events.length === 0);
    expect(store.deliveries).toHaveLength(400);
    expect(store.fanOutBatches.at(-1)).toBe(1024);
  });

  it('fans out on for the other receivers while one hangs with fanOutAhead of its deliveries waiting', async () => {
    const stuck = await receiver();
    stuck.answer(() => 'hang');
    const healthy = await receiver();
    const store = new FakeStore();
    const webhooks = [subscription(stuck.url), subscription(healthy.url)];
    for (let plant = 1n; plant <= 50n; plant++) store.publish(webhooks, plant);
    // The hanging receiver holds what its cap allows, and far more than fanOutAhead of its
    // deliveries soon wait unclaimed: the healthy one must still get every event.
    dispatch(store, { ...pacedFanOut(10), timeoutMs: 5_000 });
    await healthy.waitFor(50, 10_000);
    expect(store.events).toHaveLength(0);
    expect(stuck.received.length).toBeLessThanOrEqual(1);
  });

  it('paces the fan-out by receiver: one at its cap with fanOutAhead waiting holds back only itself', async () => {
    const busy = await receiver();
    busy.answer(() => 'hang');
    const other = await receiver();
    const store = new FakeStore();
    // Three subscriptions at a receiver that takes one delivery at a time and hangs on it: its
    // claims fill its cap, and the slots left over make claims that find nothing more of it.
    const busyHooks = [subscription(busy.url), subscription(busy.url), subscription(busy.url)];
    for (let plant = 1n; plant <= 10n; plant++) store.publish(busyHooks, plant);
    const { dispatcher } = dispatch(store, { ...pacedFanOut(100), timeoutMs: 5_000 });
    await busy.waitFor(1);
    for (let nudge = 0; nudge < 30; nudge++) {
      dispatcher.nudge();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // Nudged and polled for 300 ms: every claim found nothing it may take (the receiver is at its
    // cap), so its count stands and the fan-out stopped after fanOutAhead of its rows (plus the
    // batch that passed it); forgetting the count on an empty claim would have fanned out all ten.
    expect(store.events).toHaveLength(8);
    expect(store.receiverCalls).toBeGreaterThan(0);
    // A new subscription at another receiver: found by the next check of the receivers, it has
    // nothing waiting, so the fan-out goes on for it (the busy receiver's rows written ahead).
    const late = subscription(other.url);
    for (let plant = 11n; plant <= 20n; plant++) store.publish([late], plant);
    await other.waitFor(10, 5_000);
    expect(store.events).toHaveLength(0);
    expect(busy.received.length).toBeLessThanOrEqual(2);
  });

  it('keeps a receiver at its cap counted when deliveries finish while its empty claim comes back', async () => {
    const slow = await receiver();
    slow.answer(() => ({ status: 200, afterMs: 5 }));
    const store = new FakeStore();
    // The answer to a claim is made when it is asked and comes back 25 ms later, while the
    // receiver (one at a time, 5 ms each) finishes what was held: an empty answer was made
    // while the receiver was at its cap, even though it no longer is when it arrives.
    store.claimDelayMs = 25;
    const hooks = [subscription(slow.url), subscription(slow.url), subscription(slow.url)];
    for (let plant = 1n; plant <= 20n; plant++) store.publish(hooks, plant);
    const { dispatcher } = dispatch(store, { ...pacedFanOut(50) });
    // Nudged all along, as creates nudge it: claims are made at any moment, at the cap too.
    const nudging = setInterval(() => dispatcher.nudge(), 2);
    cleanups.push(async () => clearInterval(nudging));
    await slow.waitFor(60, 20_000);
    // Paced: at most fanOutAhead waiting before the fan-out stops, plus the event that passed it.
    // Judged by the receiver's count when the claim came back, the empty answers reset it, and
    // the fan-out ran ahead.
    expect(store.mostWaiting).toBeLessThanOrEqual(3 + hooks.length);
  });

  it('stops counting a receiver whose subscriptions are gone: it no longer keeps the fan-out going', async () => {
    const gone = await receiver();
    const busy = await receiver();
    busy.answer(() => 'hang');
    const store = new FakeStore();
    const goneHook = subscription(gone.url);
    store.publish([goneHook], 1n);
    const { dispatcher } = dispatch(store, { ...pacedFanOut(5_000), timeoutMs: 5_000 });
    await gone.waitFor(1);
    // Its subscription deleted; then a burst for a receiver that takes one at a time and hangs.
    store.subscriptions.delete(goneHook);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const busyHooks = [subscription(busy.url), subscription(busy.url), subscription(busy.url)];
    for (let plant = 2n; plant <= 11n; plant++) store.publish(busyHooks, plant);
    dispatcher.nudge();
    await busy.waitFor(1);
    for (let nudge = 0; nudge < 10; nudge++) {
      dispatcher.nudge();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // Checked again when the events came after a quiet spell: the gone receiver's count of none
    // waiting no longer lets the fan-out run ahead of the busy one.
    expect(store.events.length).toBeGreaterThanOrEqual(7);
  });

  it('rides out a failing fan-out: one warning, then fans out when the database is back', async () => {
    const hooks = await receiver();
    const store = new FakeStore();
    store.fanOutUnavailable = true;
    store.publish([subscription(hooks.url)], 1n);
    const { logs } = dispatch(store, { pollMs: 10 });
    await waitUntil(() => store.fanOutCalls >= 10);
    expect(hooks.received).toHaveLength(0);
    store.fanOutUnavailable = false;
    await hooks.waitFor(1);

    expect(logs.filter((entry) => entry.level === 'warn')).toEqual([
      expect.objectContaining({
        message: 'webhook dispatch cannot fan out events; retrying',
        err: expect.objectContaining({ type: 'DatabaseUnavailableError' }),
      }),
    ]);
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 'info', message: 'webhook dispatch fans out events again' }),
    );
  });

  it('rides out an unavailable database: one warning, then delivers when it is back', async () => {
    const hooks = await receiver();
    const store = new FakeStore();
    store.unavailable = true;
    const delivery = store.add(subscription(hooks.url), 1n);
    const { logs } = dispatch(store, { pollMs: 10 });
    await waitUntil(() => store.claimCalls >= 10);
    store.unavailable = false;
    await waitUntil(() => delivery.status === 'delivered');

    const warnings = logs.filter((entry) => entry.level === 'warn');
    expect(warnings).toEqual([
      expect.objectContaining({
        message: 'webhook dispatch cannot claim deliveries; retrying',
        err: expect.objectContaining({ type: 'DatabaseUnavailableError' }),
      }),
    ]);
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 'info', message: 'webhook dispatch claims deliveries again' }),
    );
  });

  it('logs a lost lease at debug and carries on', async () => {
    const hooks = await receiver();
    const store = new FakeStore();
    store.leasesLost = true;
    const delivery = store.add(subscription(hooks.url), 1n);
    const { logs, results } = dispatch(store, { pollMs: 60_000 });
    await waitUntil(() => results.length === 1);
    expect(results).toEqual(['lease-lost']);
    expect(delivery.attempts).toEqual([]);
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 'debug', message: 'webhook attempt not recorded: lease lost', deliveryId: '1' }),
    );
  });

  it('on close, lets a delivery in flight finish within the drain time, and claims nothing more', async () => {
    // A receiver that answers 300 ms after a request arrives.
    let arrived: () => void = () => {};
    const arrival = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const server = createServer((request, response) => {
      request.resume();
      arrived();
      setTimeout(() => response.writeHead(200).end(), 300);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const store = new FakeStore();
    const delivery = store.add(subscription(url), 1n);
    const { dispatcher } = dispatch(store, { drainMs: 2_000 });
    await arrival;

    const closing = dispatcher.close();
    const late = store.add(subscription(url), 2n);
    dispatcher.nudge();
    await closing;
    // Waited for the answer (delivered), and did not reach the drain time (nothing given back).
    expect(delivery).toMatchObject({ status: 'delivered' });
    expect(store.released).toEqual([]);
    expect(late).toMatchObject({ status: 'pending', attempts: [], lease: undefined });
  });

  it('on close, aborts what is still in flight after the drain time and gives the claims back', async () => {
    const hooks = await receiver();
    hooks.answer(() => 'hang');
    const store = new FakeStore();
    const deliveries = [store.add(subscription(hooks.url), 1n), store.add(subscription(hooks.url), 2n)];
    const { dispatcher, results } = dispatch(store, { drainMs: 100, timeoutMs: 5_000 });
    await hooks.waitFor(2);

    // Aborted at the drain time: claims given back, no attempt recorded (a 5 s timeout would record one).
    await dispatcher.close();
    expect(store.released.map((claim) => claim.deliveryId).sort()).toEqual([1n, 2n]);
    for (const delivery of deliveries) {
      expect(delivery).toMatchObject({ status: 'pending', attempts: [], lease: undefined });
    }
    expect(results).toEqual([]);
    const claimsAtClose = store.claimCalls;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(store.claimCalls).toBe(claimsAtClose);
  });

  it('refuses settings under which an attempt could outlive its lease', () => {
    const store = new FakeStore();
    const settings = {
      store,
      retryScheduleMs: [1_000],
      timeoutMs: 10_000,
      pollMs: 1_000,
      concurrency: 1,
      perWebhookConcurrency: 1,
      allowPrivateNetworks: false,
    };
    expect(() => createWebhookDispatcher({ ...settings, leaseMs: 10_000 })).toThrow(
      'leaseMs must be greater than timeoutMs',
    );
    expect(() => createWebhookDispatcher({ ...settings, leaseMs: 60_000, concurrency: 0 })).toThrow(
      'concurrency must be at least 1',
    );
  });
});
