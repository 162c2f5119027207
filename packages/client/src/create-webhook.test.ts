import { afterEach, describe, expect, it } from 'vitest';
import { closeScriptedServers, errorAnswer, json, startScriptedServer } from './test-support/scripted-server.js';
import { caught, createTestClient, TEST_TOKEN } from './test-support/test-client.js';
import { CREATED_AT, SECRET, WEBHOOK_ID, webhookText } from './test-support/webhook-answers.js';

afterEach(closeScriptedServers);

describe('createWebhook', () => {
  it('sends POST /webhooks with the JSON body and returns the subscription with its secret', async () => {
    const url = 'https://hooks.example.com/plants';
    const server = await startScriptedServer([json(201, webhookText({ url, description: 'ops', secret: SECRET }))]);
    const created = await createTestClient(server.url).createWebhook({ url, description: 'ops' });

    expect(created).toStrictEqual({
      id: WEBHOOK_ID,
      url,
      description: 'ops',
      team: 'inventory',
      createdAt: CREATED_AT,
      secret: SECRET,
    });
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/webhooks');
    expect(request?.body).toBe(`{"url":"${url}","description":"ops"}`);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers.authorization).toBe(`Bearer ${TEST_TOKEN}`);
  });

  it.each([
    ['an ftp URL', { url: 'ftp://hooks.example.com/' }, 'url must be an absolute http:// or https:// URL'],
    ['credentials', { url: 'https://u:p@hooks.example.com/' }, 'url must not contain credentials (user:password@)'],
    ['a relative URL', { url: '/hooks' }, 'url must be an absolute http:// or https:// URL'],
    ['a long description', { url: 'https://a.example/', description: 'd'.repeat(256) }, /^description must be/],
  ])('refuses %s with error 400 and sends nothing', async (_label, webhook, message) => {
    const server = await startScriptedServer([]);
    const error = await caught(createTestClient(server.url).createWebhook(webhook));
    expect(error).toMatchObject({ kind: 'invalid-input', status: 0, error: 400 });
    expect(error.message).toMatch(message);
    expect(server.requests).toHaveLength(0);
  });

  it("throws the service's refusal of a private address as it came", async () => {
    const message =
      'url host 10.0.0.5 is not a public address (private); webhooks are only sent to public addresses unless the service runs with WEBHOOKS_ALLOW_PRIVATE_NETWORKS=true';
    const server = await startScriptedServer([errorAnswer(400, 400, message)]);
    const error = await caught(createTestClient(server.url).createWebhook({ url: 'https://10.0.0.5/' }));
    expect(error).toMatchObject({ kind: 'error-response', status: 400, error: 400, message });
  });

  it('throws the 409 of a full registry without retrying', async () => {
    const message = 'at most 100 webhooks may be registered; delete one first';
    const server = await startScriptedServer([errorAnswer(409, 409, message)]);
    const error = await caught(createTestClient(server.url).createWebhook({ url: 'https://hooks.example.com/' }));
    expect(error).toMatchObject({ kind: 'error-response', status: 409, error: 409, message });
    expect(server.requests).toHaveLength(1);
  });

  it('does not retry after a lost answer: a retry would register a second subscription', async () => {
    const server = await startScriptedServer([{ status: 201, dropConnection: true }, json(201, webhookText())]);
    const error = await caught(createTestClient(server.url).createWebhook({ url: 'https://hooks.example.com/plants' }));
    expect(error).toMatchObject({ kind: 'network' });
    expect(server.requests).toHaveLength(1);
  });

  it("retries the service's own 503, which registered nothing", async () => {
    const server = await startScriptedServer([
      errorAnswer(503, 503, 'the database is unavailable; retry shortly', { 'Retry-After': '0' }),
      json(201, webhookText({ secret: SECRET })),
    ]);
    const created = await createTestClient(server.url).createWebhook({ url: 'https://hooks.example.com/plants' });
    expect(created.secret).toBe(SECRET);
    expect(server.requests).toHaveLength(2);
  });

  it.each([
    ['a 200 instead of 201', json(200, webhookText({ secret: SECRET })), /answered 200 where 201 was expected/],
    ['an answer without the secret', json(201, webhookText()), /secret: secret is required/],
    [
      'another URL than the one sent',
      json(201, webhookText({ url: 'https://elsewhere.example/', secret: SECRET })),
      /url https:\/\/elsewhere\.example\/ is not https:\/\/hooks\.example\.com\/plants/,
    ],
  ])('refuses %s as an invalid response', async (_label, answer, message) => {
    const server = await startScriptedServer([answer]);
    const error = await caught(createTestClient(server.url).createWebhook({ url: 'https://hooks.example.com/plants' }));
    expect(error).toMatchObject({ kind: 'invalid-response' });
    expect(error.message).toMatch(message);
  });
});
