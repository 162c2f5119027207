import { afterEach, describe, expect, it } from 'vitest';
import { closeScriptedServers, errorAnswer, json, startScriptedServer } from './test-support/scripted-server.js';
import { caught, createTestClient } from './test-support/test-client.js';
import {
  CREATED_AT,
  deliveryText,
  OTHER_WEBHOOK_ID,
  SECRET,
  WEBHOOK_ID,
  webhookText,
} from './test-support/webhook-answers.js';

afterEach(closeScriptedServers);

describe('listWebhooks', () => {
  it('sends GET /webhooks and returns the subscriptions, a secret dropped if one came', async () => {
    const body = `[${webhookText({ description: 'ops' })},${webhookText({ id: OTHER_WEBHOOK_ID, secret: SECRET })}]`;
    const server = await startScriptedServer([json(200, body)]);
    const webhooks = await createTestClient(server.url).listWebhooks();
    expect(webhooks).toStrictEqual([
      {
        id: WEBHOOK_ID,
        url: 'https://hooks.example.com/plants',
        description: 'ops',
        team: 'inventory',
        createdAt: CREATED_AT,
      },
      { id: OTHER_WEBHOOK_ID, url: 'https://hooks.example.com/plants', team: 'inventory', createdAt: CREATED_AT },
    ]);
    expect(server.requests.map(({ method, url }) => `${method} ${url}`)).toEqual(['GET /webhooks']);
  });

  it('retries a 503 like every read', async () => {
    const server = await startScriptedServer([{ status: 503, headers: { 'Retry-After': '0' } }, json(200, '[]')]);
    expect(await createTestClient(server.url).listWebhooks()).toEqual([]);
    expect(server.requests).toHaveLength(2);
  });

  it('throws the 403 of a token without webhooks:manage', async () => {
    const server = await startScriptedServer([errorAnswer(403, 403, 'this token lacks the webhooks:manage scope')]);
    const error = await caught(createTestClient(server.url).listWebhooks());
    expect(error).toMatchObject({ kind: 'error-response', status: 403, error: 403 });
    expect(error.message).toBe('this token lacks the webhooks:manage scope');
  });
});

describe('deleteWebhook', () => {
  it('sends DELETE /webhooks/{id} and resolves on 204', async () => {
    const server = await startScriptedServer([{ status: 204 }]);
    await expect(createTestClient(server.url).deleteWebhook(WEBHOOK_ID)).resolves.toBeUndefined();
    expect(server.requests.map(({ method, url }) => `${method} ${url}`)).toEqual([`DELETE /webhooks/${WEBHOOK_ID}`]);
  });

  it('refuses an id that is not a UUID before sending (no path tricks)', async () => {
    const server = await startScriptedServer([]);
    const error = await caught(createTestClient(server.url).deleteWebhook('../plants/1'));
    expect(error).toMatchObject({ kind: 'invalid-input', error: 400, message: 'id must be a UUID' });
    expect(server.requests).toHaveLength(0);
  });

  it('throws the 404 of the first attempt, but resolves on the 404 of a retry after a 503', async () => {
    const missing = await startScriptedServer([errorAnswer(404, 404, `no webhook with id ${WEBHOOK_ID}`)]);
    expect(await caught(createTestClient(missing.url).deleteWebhook(WEBHOOK_ID))).toMatchObject({ error: 404 });
    const server = await startScriptedServer([
      errorAnswer(503, 503, 'the database is unavailable; retry shortly', { 'Retry-After': '0' }),
      errorAnswer(404, 404, `no webhook with id ${WEBHOOK_ID}`),
    ]);
    await expect(createTestClient(server.url).deleteWebhook(WEBHOOK_ID)).resolves.toBeUndefined();
    expect(server.requests).toHaveLength(2);
  });

  it('does not retry after a lost answer: the delete may have happened', async () => {
    const server = await startScriptedServer([{ status: 204, dropConnection: true }, { status: 204 }]);
    expect(await caught(createTestClient(server.url).deleteWebhook(WEBHOOK_ID))).toMatchObject({ kind: 'network' });
    expect(server.requests).toHaveLength(1);
  });
});

describe('resendWebhookDelivery', () => {
  it('sends POST .../deliveries/{deliveryId}/resend with the id exact and returns the delivery', async () => {
    const server = await startScriptedServer([json(202, deliveryText(9223372036854775807n))]);
    const delivery = await createTestClient(server.url).resendWebhookDelivery(WEBHOOK_ID, 9223372036854775807n);
    expect(delivery).toMatchObject({ id: 9223372036854775807n, plantId: 9007199254740993n, status: 'pending' });
    expect(server.requests.map(({ method, url, body }) => `${method} ${url} ${body}`)).toEqual([
      `POST /webhooks/${WEBHOOK_ID}/deliveries/9223372036854775807/resend `,
    ]);
  });

  it('throws the 404 of an unknown delivery', async () => {
    const message = `webhook ${WEBHOOK_ID} has no delivery with id 5`;
    const server = await startScriptedServer([errorAnswer(404, 404, message)]);
    const error = await caught(createTestClient(server.url).resendWebhookDelivery(WEBHOOK_ID, 5n));
    expect(error).toMatchObject({ kind: 'error-response', status: 404, error: 404, message });
  });

  it('refuses an answer about another delivery, and a 200 instead of 202', async () => {
    const other = await startScriptedServer([json(202, deliveryText(6n))]);
    const error = await caught(createTestClient(other.url).resendWebhookDelivery(WEBHOOK_ID, 5n));
    expect(error).toMatchObject({ kind: 'invalid-response' });
    expect(error.message).toMatch(/id 6 is not 5/);
    const ok = await startScriptedServer([json(200, deliveryText(5n))]);
    expect(await caught(createTestClient(ok.url).resendWebhookDelivery(WEBHOOK_ID, 5n))).toMatchObject({
      kind: 'invalid-response',
      status: 200,
    });
  });

  it('refuses a webhook id that is not a UUID and a delivery id beyond int64 before sending', async () => {
    const server = await startScriptedServer([]);
    const client = createTestClient(server.url);
    expect(await caught(client.resendWebhookDelivery('x', 1n))).toMatchObject({ kind: 'invalid-input' });
    expect(await caught(client.resendWebhookDelivery(WEBHOOK_ID, 2n ** 63n))).toMatchObject({ kind: 'invalid-input' });
    expect(server.requests).toHaveLength(0);
  });
});
