import { afterEach, describe, expect, it } from 'vitest';
import {
  closeScriptedServers,
  errorAnswer,
  json,
  type ScriptFunction,
  startScriptedServer,
} from './test-support/scripted-server.js';
import { caught, createTestClient } from './test-support/test-client.js';
import { deliveryText, OTHER_WEBHOOK_ID, WEBHOOK_ID } from './test-support/webhook-answers.js';

afterEach(closeScriptedServers);

/** Serves the deliveries `ids` page by page as the service does: limit, after, a query-only next link. */
function pagingScript(ids: readonly bigint[]): ScriptFunction {
  return (request) => {
    const url = new URL(request.url, 'http://placeholder');
    const limit = Number(url.searchParams.get('limit') ?? '20');
    const afterText = url.searchParams.get('after');
    const matching = ids.filter((id) => afterText === null || id > BigInt(afterText));
    const page = matching.slice(0, limit);
    const last = page.at(-1);
    const headers: Record<string, string> =
      matching.length > limit && last !== undefined ? { Link: `<?limit=${limit}&after=${last}>; rel="next"` } : {};
    return json(200, `[${page.map((id) => deliveryText(id)).join(',')}]`, headers);
  };
}

const IDS = [1n, 2n, 9007199254740993n, 9007199254740994n, 9223372036854775807n];

describe('listWebhookDeliveries', () => {
  it('sends the page query and returns the deliveries with exact ids and the next query', async () => {
    const server = await startScriptedServer(pagingScript(IDS));
    const page = await createTestClient(server.url).listWebhookDeliveries(WEBHOOK_ID, { limit: 2, after: 1n });
    expect(page.deliveries.map((delivery) => delivery.id)).toEqual([2n, 9007199254740993n]);
    expect(page.deliveries[0]).toMatchObject({ webhookId: WEBHOOK_ID, plantId: 9007199254740993n, attempts: [] });
    expect(page.next).toEqual({ limit: 2, after: 9007199254740993n });
    expect(server.requests[0]?.url).toBe(`/webhooks/${WEBHOOK_ID}/deliveries?limit=2&after=1`);
  });

  it('returns next null on the last page, and sends the default limit', async () => {
    const server = await startScriptedServer(pagingScript(IDS));
    const page = await createTestClient(server.url).listWebhookDeliveries(WEBHOOK_ID);
    expect(page.deliveries).toHaveLength(5);
    expect(page.next).toBeNull();
    expect(server.requests[0]?.url).toBe(`/webhooks/${WEBHOOK_ID}/deliveries?limit=20`);
  });

  it('refuses a bad query before sending', async () => {
    const server = await startScriptedServer([]);
    const client = createTestClient(server.url);
    expect(await caught(client.listWebhookDeliveries(WEBHOOK_ID, { limit: 101 }))).toMatchObject({
      kind: 'invalid-input',
      message: 'limit must be an integer between 1 and 100',
    });
    expect(await caught(client.listWebhookDeliveries('not-a-uuid'))).toMatchObject({ kind: 'invalid-input' });
    expect(server.requests).toHaveLength(0);
  });

  it('throws the 404 of an unknown webhook', async () => {
    const server = await startScriptedServer([errorAnswer(404, 404, `no webhook with id ${WEBHOOK_ID}`)]);
    const error = await caught(createTestClient(server.url).listWebhookDeliveries(WEBHOOK_ID));
    expect(error).toMatchObject({ kind: 'error-response', status: 404, error: 404 });
  });

  it.each([
    [
      'more than limit',
      `[${deliveryText(1n)},${deliveryText(2n)},${deliveryText(3n)}]`,
      {},
      /3 deliveries, more than limit 2/,
    ],
    ['ids out of order', `[${deliveryText(2n)},${deliveryText(1n)}]`, {}, /id 1 does not come after 2/],
    ['another webhook', `[${deliveryText(1n, { webhookId: OTHER_WEBHOOK_ID })}]`, {}, /belongs to webhook/],
    [
      'a next link that does not move on',
      `[${deliveryText(1n)}]`,
      { Link: '<?limit=2&after=0>; rel="next"' },
      /does not move past after=0/,
    ],
    [
      'a next link elsewhere',
      `[${deliveryText(1n)}]`,
      { Link: '<https://evil.example/?after=5>; rel="next"' },
      /is not http/,
    ],
  ])('refuses an answer with %s', async (_label, body, headers, message) => {
    const server = await startScriptedServer([json(200, body, headers)]);
    const error = await caught(createTestClient(server.url).listWebhookDeliveries(WEBHOOK_ID, { limit: 2, after: 0n }));
    expect(error).toMatchObject({ kind: 'invalid-response' });
    expect(error.message).toMatch(message);
  });
});

describe('webhookDeliveries (the iterator)', () => {
  it('walks every page in ascending id order, each delivery once', async () => {
    const server = await startScriptedServer(pagingScript(IDS));
    const seen: bigint[] = [];
    for await (const delivery of createTestClient(server.url).webhookDeliveries(WEBHOOK_ID, { pageSize: 2 })) {
      seen.push(delivery.id);
    }
    expect(seen).toEqual(IDS);
    expect(server.requests.map((request) => request.url)).toEqual([
      `/webhooks/${WEBHOOK_ID}/deliveries?limit=2`,
      `/webhooks/${WEBHOOK_ID}/deliveries?limit=2&after=2`,
      `/webhooks/${WEBHOOK_ID}/deliveries?limit=2&after=9007199254740994`,
    ]);
  });

  it('starts after the given id, and fetches a page only when the loop asks for it', async () => {
    const server = await startScriptedServer(pagingScript(IDS));
    const walk = createTestClient(server.url).webhookDeliveries(WEBHOOK_ID, { pageSize: 1, after: 2n });
    expect((await walk.next()).value).toMatchObject({ id: 9007199254740993n });
    await walk.return();
    expect(server.requests).toHaveLength(1);
  });
});
