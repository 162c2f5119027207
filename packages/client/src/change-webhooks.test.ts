import { afterEach, describe, expect, it } from 'vitest';
import { closeScriptedServers, errorAnswer, json, startScriptedServer } from './test-support/scripted-server.js';
import { caught, createTestClient } from './test-support/test-client.js';
import { CREATED_AT, deliveryText, SECRET, WEBHOOK_ID, webhookText } from './test-support/webhook-answers.js';

afterEach(closeScriptedServers);

const withTypes = (types: string) => `${webhookText().slice(0, -1)},"eventTypes":${types},"enabled":true}`;

describe('updateWebhook', () => {
  it('sends PATCH /webhooks/{id} with the merge patch, keys in the schema order, and returns the subscription', async () => {
    const server = await startScriptedServer([json(200, withTypes('["plant.created","plant.deleted"]'))]);
    const webhook = await createTestClient(server.url).updateWebhook(WEBHOOK_ID, {
      eventTypes: ['plant.created', 'plant.deleted'],
      description: null,
    });
    expect(webhook).toMatchObject({ id: WEBHOOK_ID, eventTypes: ['plant.created', 'plant.deleted'], enabled: true });
    expect(server.requests.map(({ method, url, body }) => `${method} ${url} ${body}`)).toEqual([
      `PATCH /webhooks/${WEBHOOK_ID} {"description":null,"eventTypes":["plant.created","plant.deleted"]}`,
    ]);
  });

  it('refuses an unknown event type before sending', async () => {
    const server = await startScriptedServer([]);
    // @ts-expect-error: not an event type
    const error = await caught(createTestClient(server.url).updateWebhook(WEBHOOK_ID, { eventTypes: ['plant.moved'] }));
    expect(error).toMatchObject({ kind: 'invalid-input', error: 400 });
    expect(server.requests).toHaveLength(0);
  });

  it('reads a subscription from a service that knows no event types yet', async () => {
    const server = await startScriptedServer([json(200, webhookText())]);
    const webhook = await createTestClient(server.url).updateWebhook(WEBHOOK_ID, { enabled: true });
    expect(webhook).toStrictEqual({
      id: WEBHOOK_ID,
      url: 'https://hooks.example.com/plants',
      team: 'inventory',
      createdAt: CREATED_AT,
    });
  });
});

describe('rotateWebhookSecret', () => {
  it('sends POST /webhooks/{id}/secret with the grace period, or {} for the default', async () => {
    const rotated = `{"secret":"${SECRET}","previousSecretExpiresAt":"${CREATED_AT}"}`;
    const server = await startScriptedServer([json(200, rotated), json(200, `{"secret":"${SECRET}"}`)]);
    const client = createTestClient(server.url);
    expect(await client.rotateWebhookSecret(WEBHOOK_ID)).toEqual({
      secret: SECRET,
      previousSecretExpiresAt: CREATED_AT,
    });
    expect(await client.rotateWebhookSecret(WEBHOOK_ID, { gracePeriodSeconds: 0 })).toEqual({ secret: SECRET });
    expect(server.requests.map(({ method, url, body }) => `${method} ${url} ${body}`)).toEqual([
      `POST /webhooks/${WEBHOOK_ID}/secret {}`,
      `POST /webhooks/${WEBHOOK_ID}/secret {"gracePeriodSeconds":0}`,
    ]);
  });

  it('does not retry after a lost answer (a second rotation would lose the first secret)', async () => {
    const server = await startScriptedServer([{ status: 502 }]);
    const error = await caught(createTestClient(server.url).rotateWebhookSecret(WEBHOOK_ID));
    expect(error).toMatchObject({ status: 502 });
    expect(server.requests).toHaveLength(1);
  });

  it('throws the 404 of another team', async () => {
    const server = await startScriptedServer([errorAnswer(404, 404, `no webhook with id ${WEBHOOK_ID}`)]);
    const error = await caught(createTestClient(server.url).rotateWebhookSecret(WEBHOOK_ID));
    expect(error).toMatchObject({ kind: 'error-response', status: 404, error: 404 });
  });
});

describe('sendWebhookTest', () => {
  it('sends POST /webhooks/{id}/test and returns the delivery: eventType webhook.test, plantId 0', async () => {
    const delivery = deliveryText(19n, { plantId: 0n }).replace('"plantId"', '"eventType":"webhook.test","plantId"');
    const server = await startScriptedServer([json(202, delivery)]);
    const queued = await createTestClient(server.url).sendWebhookTest(WEBHOOK_ID);
    expect(queued).toMatchObject({ id: 19n, webhookId: WEBHOOK_ID, eventType: 'webhook.test', plantId: 0n });
    expect(server.requests.map(({ method, url }) => `${method} ${url}`)).toEqual([`POST /webhooks/${WEBHOOK_ID}/test`]);
  });
});
