/**
 * Event types, secret rotation, test events and disabling, end to end: the real service with its
 * dispatcher, real receivers on real ports, signatures checked with the Standard Webhooks library a
 * receiver would use.
 */
import { testEngines, testToken } from '@plant-store/db/testing';
import { parseJson, type RotatedWebhookSecret, type Webhook } from '@plant-store/schema';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { failOnContractViolations } from './test-support/checked-fetch.js';
import { serviceLifecycle } from './test-support/service-lifecycle.js';
import { request, startTestService, type TestService } from './test-support/test-service.js';
import { waitUntil } from './test-support/wait-until.js';
import { createPlant, deliveries, eventually, FAST_WEBHOOKS, SCOPES } from './test-support/webhook-end-to-end.js';
import { type ReceivedWebhook, startWebhookReceiver, type WebhookReceiver } from './test-support/webhook-receiver.js';

failOnContractViolations();

const ALL_TYPES = ['plant.created', 'plant.updated', 'plant.deleted'];

/** An envelope as the exact codec reads it: ids and versions as bigint. */
interface PlantEvent {
  readonly type: string;
  readonly timestamp: string;
  readonly data: { readonly id: bigint; readonly name: string; readonly tag?: string; readonly version: bigint };
}

/** Whether `secret` verifies the delivery as a receiver would (signature and timestamp). */
function verifies(secret: string, delivery: ReceivedWebhook): boolean {
  try {
    new StandardWebhook(secret).verify(delivery.body, delivery.headers);
    return true;
  } catch {
    return false;
  }
}

describe.each(testEngines())('webhook event types and subscription changes on %s', (engine) => {
  const { cleanups, storage: newStorage } = serviceLifecycle(engine);

  async function setUp(env: Record<string, string> = {}) {
    const storage = await newStorage();
    // Attempts of 10 s: receivers answer at once, and a loaded machine must not time one out.
    const service: TestService = await startTestService(storage, {
      ...FAST_WEBHOOKS,
      WEBHOOKS_TIMEOUT_MS: '10000',
      WEBHOOKS_LEASE_MS: '30000',
      ...env,
    });
    cleanups.push(() => service.close());
    const { token } = await service.db.issueToken(testToken({ name: 'webhooks', scopes: SCOPES }));
    return { service, token };
  }

  async function receiver(): Promise<WebhookReceiver> {
    const started = await startWebhookReceiver();
    cleanups.push(() => started.close());
    return started;
  }

  async function subscribe(service: TestService, token: string, body: Record<string, unknown>) {
    const response = await request(service.url, '/webhooks', { body: JSON.stringify(body), token });
    expect(response.status).toBe(201);
    return response.body as Webhook & { secret: string };
  }

  const send = (service: TestService, token: string, method: string, path: string, body?: string) =>
    request(service.url, path, {
      method,
      token,
      ...(body === undefined
        ? {}
        : { body, contentType: method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' }),
    });

  it('sends every chosen type as an envelope, ids exact; the default subscription keeps the NewPlant body', async () => {
    const { service, token } = await setUp();
    const plain = await receiver();
    const every = await receiver();
    const plainHook = await subscribe(service, token, { url: plain.url });
    const everyHook = await subscribe(service, token, { url: every.url, eventTypes: ALL_TYPES });

    const id = 9223372036854775807n - 2n;
    await createPlant(service.url, token, { id, name: 'Monstera', tag: 'aroid' });
    expect(
      (await send(service, token, 'PATCH', `/plants/${id}`, '{"name":"Swiss cheese plant","tag":null}')).status,
    ).toBe(200);
    expect((await send(service, token, 'DELETE', `/plants/${id}`)).status).toBe(204);

    const envelopes = await every.waitFor(3);
    const [created] = await plain.waitFor(1);
    // The plant.created subscription's body, byte for byte what it always was.
    expect(created?.body).toBe('{"id":9223372036854775805,"name":"Monstera","tag":"aroid"}');
    expect(created && verifies(plainHook.secret, created)).toBe(true);
    // Deliveries are not ordered: sort by version, as a receiver that keeps the highest would.
    const parsed = envelopes
      .map((delivery) => {
        expect(verifies(everyHook.secret, delivery)).toBe(true);
        return { delivery, event: parseJson(delivery.body) as PlantEvent };
      })
      .sort((a, b) => (a.event.data.version < b.event.data.version ? -1 : 1));
    expect(parsed.map(({ event }) => [event.type, event.data.id, event.data.name, event.data.tag])).toEqual([
      ['plant.created', id, 'Monstera', 'aroid'],
      ['plant.updated', id, 'Swiss cheese plant', undefined],
      ['plant.deleted', id, 'Swiss cheese plant', undefined],
    ]);
    // The exact bytes: keys in order, the id an exact JSON integer.
    expect(parsed[1]?.delivery.body).toMatch(
      /^\{"type":"plant\.updated","timestamp":"[0-9T:.Z-]+","data":\{"id":9223372036854775805,"name":"Swiss cheese plant","version":\d+\}\}$/,
    );
    // The same ids as the feed's events. On PostgreSQL the feed shows an event once every older
    // transaction on the server has ended (other test files' too): it may lag the deliveries.
    const sent = parsed.map(({ delivery }) => delivery.headers['webhook-id']);
    const feedIds = await eventually(async () => {
      const feed = await request(service.url, '/events?limit=1000', { token });
      const ids = (feed.body as Array<{ eventId: string }>).map((event) => event.eventId);
      return sent.every((id) => ids.includes(id ?? '')) ? ids : undefined;
    }, 30_000);
    for (const id of sent) expect(feedIds).toContain(id);

    // Nothing more for the plant.created subscription: no update, no delete.
    await eventually(async () => {
      const log = await deliveries(service.url, token, everyHook.id);
      return log.every((delivery) => delivery.status === 'delivered') ? log : undefined;
    });
    expect(plain.received).toHaveLength(1);
    expect((await deliveries(service.url, token, plainHook.id)).map((delivery) => delivery.status)).toEqual([
      'delivered',
    ]);
  });

  it('signs with both secrets during the grace period of a rotation, then with the new one alone', async () => {
    const { service, token } = await setUp();
    const hook = await receiver();
    const subscription = await subscribe(service, token, { url: hook.url });
    const oldSecret = subscription.secret;

    await createPlant(service.url, token, { id: 1n, name: 'Before' });
    const [before] = await hook.waitFor(1);
    if (!before) throw new Error('no delivery');
    expect(verifies(oldSecret, before)).toBe(true);
    expect(before.headers['webhook-signature']?.split(' ')).toHaveLength(1);

    // A short grace period, so that the test sees it end.
    const rotation = await send(
      service,
      token,
      'POST',
      `/webhooks/${subscription.id}/secret`,
      '{"gracePeriodSeconds":2}',
    );
    expect(rotation.status).toBe(200);
    const { secret: newSecret, previousSecretExpiresAt } = rotation.body as RotatedWebhookSecret;
    expect(previousSecretExpiresAt).toEqual(expect.any(String));

    await createPlant(service.url, token, { id: 2n, name: 'During' });
    const [, during] = await hook.waitFor(2);
    if (!during) throw new Error('no delivery');
    expect(during.headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(verifies(newSecret, during)).toBe(true);
    expect(verifies(oldSecret, during)).toBe(true);

    // Once the subscription no longer shows the previous secret's expiry, it has stopped signing.
    await waitUntil(
      async () => {
        const listed = (await request(service.url, '/webhooks', { token })).body as Webhook[];
        return listed.every((webhook) => webhook.previousSecretExpiresAt === undefined);
      },
      15_000,
      100,
    );
    await createPlant(service.url, token, { id: 3n, name: 'After' });
    const [, , after] = await hook.waitFor(3);
    if (!after) throw new Error('no delivery');
    expect(after.headers['webhook-signature']?.split(' ')).toHaveLength(1);
    expect(verifies(newSecret, after)).toBe(true);
    expect(verifies(oldSecret, after)).toBe(false);

    // A rotation without grace: the secret it replaces stops at once.
    const immediate = await send(
      service,
      token,
      'POST',
      `/webhooks/${subscription.id}/secret`,
      '{"gracePeriodSeconds":0}',
    );
    const { secret: newest } = immediate.body as RotatedWebhookSecret;
    await createPlant(service.url, token, { id: 4n, name: 'Immediate' });
    const [, , , last] = await hook.waitFor(4);
    if (!last) throw new Error('no delivery');
    expect(verifies(newest, last)).toBe(true);
    expect(verifies(newSecret, last)).toBe(false);
  });

  it('sends a test event as an envelope whatever the types chosen, and logs it', async () => {
    const { service, token } = await setUp();
    const hook = await receiver();
    const subscription = await subscribe(service, token, { url: hook.url });
    const queued = await send(service, token, 'POST', `/webhooks/${subscription.id}/test`);
    expect(queued.status).toBe(202);
    const [test] = await hook.waitFor(1);
    if (!test) throw new Error('no delivery');
    expect(verifies(subscription.secret, test)).toBe(true);
    expect(test.body).toMatch(
      new RegExp(
        `^\\{"type":"webhook\\.test","timestamp":"[0-9T:.Z-]+","data":\\{"webhookId":"${subscription.id}"\\}\\}$`,
      ),
    );
    const log = await eventually(async () => {
      const listed = await deliveries(service.url, token, subscription.id);
      return listed[0]?.status === 'delivered' ? listed : undefined;
    });
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ eventId: test.headers['webhook-id'], plantId: 0n });
  });

  it('disables a subscription whose every attempt failed for WEBHOOKS_DISABLE_AFTER_DAYS; its pending deliveries go out on re-enable', async () => {
    // 0.00001 days: 864 ms of failures; twenty retries 200 ms apart keep the delivery pending past it.
    const { service, token } = await setUp({
      WEBHOOKS_DISABLE_AFTER_DAYS: '0.00001',
      WEBHOOKS_RETRY_SCHEDULE: Array.from({ length: 20 }, () => '200ms').join(','),
    });
    const hook = await receiver();
    hook.answer(() => 500);
    const subscription = await subscribe(service, token, { url: hook.url });
    await createPlant(service.url, token, { id: 10n, name: 'Failing' });

    const disabled = await eventually(async () => {
      const listed = (await request(service.url, '/webhooks', { token })).body as Webhook[];
      return listed[0]?.enabled === false ? listed[0] : undefined;
    });
    expect(disabled.disabledReason).toMatch(
      /^disabled by the service: every delivery attempt failed for 1 s \(since \d{4}-\d\d-\d\dT[0-9:.]+Z\)$/,
    );
    const [pending] = await deliveries(service.url, token, subscription.id);
    expect(pending?.status).toBe('pending');
    const attemptsWhenDisabled = pending?.attempts.length ?? 0;
    expect(attemptsWhenDisabled).toBeGreaterThanOrEqual(2);

    // While disabled: its pending delivery waits, and what happens meanwhile is not given to it.
    // A healthy subscription registered now gets the next plant: once it has, the dispatcher has
    // fanned it out and claimed since (its retry of plant 10 was long due), and sent nothing to
    // the disabled one.
    const received = hook.received.length;
    const healthy = await receiver();
    await subscribe(service, token, { url: healthy.url });
    await createPlant(service.url, token, { id: 11n, name: 'Meanwhile' });
    await healthy.waitFor(1);
    await createPlant(service.url, token, { id: 12n, name: 'Meanwhile too' });
    await healthy.waitFor(2);
    expect(hook.received).toHaveLength(received);
    const waiting = await deliveries(service.url, token, subscription.id);
    expect(waiting.map((delivery) => [delivery.plantId, delivery.status, delivery.attempts.length])).toEqual([
      [10n, 'pending', attemptsWhenDisabled],
    ]);

    // Its owner mends the receiver and enables it: the waiting delivery goes out.
    hook.answer(() => 204);
    const enabled = await send(service, token, 'PATCH', `/webhooks/${subscription.id}`, '{"enabled":true}');
    expect(enabled.body).toMatchObject({ enabled: true });
    const done = await eventually(async () => {
      const [delivery] = await deliveries(service.url, token, subscription.id);
      return delivery?.status === 'delivered' ? delivery : undefined;
    });
    expect(done.plantId).toBe(10n);
    expect(verifies(subscription.secret, hook.received.at(-1) as ReceivedWebhook)).toBe(true);
  });
});
