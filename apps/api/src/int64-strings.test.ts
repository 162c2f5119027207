/**
 * `Plant-Store-Int64: string` over HTTP, on every kind of operation: the real service on both
 * engines, each answer checked against the document for that form (checkedFetch picks
 * `/openapi.json?int64=string` for a request that sends the header). The generated client that
 * needs it: generated-client.test.ts.
 */
import { createTestStorage, type TestStorage, testEngines, testToken } from '@plant-store/db/testing';
import { INT64_MAX, INT64_MIN, stringifyJson } from '@plant-store/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenApiDocument } from './openapi/openapi-document.js';
import { failOnContractViolations } from './test-support/checked-fetch.js';
import { expectError } from './test-support/expect-error.js';
import { type RequestOptions, request, startTestService, type TestService } from './test-support/test-service.js';
import { eventually, FAST_WEBHOOKS } from './test-support/webhook-end-to-end.js';
import { startWebhookReceiver, type WebhookReceiver } from './test-support/webhook-receiver.js';

failOnContractViolations();

const STRINGS = { 'plant-store-int64': 'string' };
const ABOVE_2_53 = 2n ** 53n + 1n;

describe.each(testEngines())('int64s as strings (Plant-Store-Int64: string) on %s', (engine) => {
  let storage: TestStorage;
  let service: TestService;
  let hook: WebhookReceiver;
  let token: string;

  /** A request asking for strings. */
  const asStrings = (path: string, options: RequestOptions = {}) =>
    request(service.url, path, { token, ...options, headers: { ...STRINGS, ...options.headers } });

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    service = await startTestService(storage, FAST_WEBHOOKS);
    hook = await startWebhookReceiver();
    token = (
      await service.db.issueToken(
        testToken({ name: 'all', scopes: ['plants:read', 'plants:write', 'webhooks:manage', 'tokens:manage'] }),
      )
    ).token;
  });
  afterAll(async () => {
    await service?.close();
    await hook?.close();
    await storage?.dispose();
  });

  it('serves the document for that form at /openapi.json?int64=string, and refuses another form', async () => {
    const variant = await request(service.url, '/openapi.json?int64=string');
    expect(variant.status).toBe(200);
    expect(variant.text).toBe(stringifyJson(createOpenApiDocument({ bodyLimitBytes: 65_536, int64Form: 'string' })));
    const number = await request(service.url, '/openapi.json?int64=number');
    expect(number.text).toBe((await request(service.url, '/openapi.json')).text);
    expectError(await request(service.url, '/openapi.json?int64=strings'), 400, 'query parameter int64 must be');
    expectError(await request(service.url, '/openapi.json?int64=string&int64=string'), 400, 'at most once');
  });

  it('creates from a string id, answers it as a string, and says so; without the header, integers as before', async () => {
    const created = await asStrings('/plants', { body: `{"id":"${ABOVE_2_53}","name":"Ficus 🌿"}` });
    expect(created.status).toBe(200);
    expect(created.text).toBe(`{"id":"${ABOVE_2_53}","name":"Ficus 🌿"}`);
    expect(created.headers.get('plant-store-int64')).toBe('string');
    expect(created.headers.get('vary')).toBe('Plant-Store-Int64');

    const plain = await request(service.url, `/plants/${ABOVE_2_53}`, { token });
    expect(plain.text).toBe(`{"id":${ABOVE_2_53},"name":"Ficus 🌿"}`);
    expect(plain.headers.get('plant-store-int64')).toBeNull();
    expect(plain.headers.get('vary')).toBe('Plant-Store-Int64');
    const explicit = await request(service.url, `/plants/${ABOVE_2_53}`, {
      token,
      headers: { 'plant-store-int64': 'number' },
    });
    expect(explicit.text).toBe(plain.text);

    // Numbers are still accepted under the header (a replay: the same plant), answered as strings.
    const replay = await asStrings('/plants', { body: `{"id":${ABOVE_2_53},"name":"Ficus 🌿"}` });
    expect(replay.status).toBe(200);
    expect(replay.text).toBe(created.text);
    // A string id is still refused without it, as it always was.
    const refused = await request(service.url, '/plants', { token, body: '{"id":"7","name":"Fern"}' });
    expectError(refused, 400, /^id must be an integer between/);
  });

  it('takes both int64 ends as strings, and refuses what is no int64 with the messages numbers get', async () => {
    for (const id of [INT64_MIN, INT64_MAX]) {
      const created = await asStrings('/plants', { body: `{"id":"${id}","name":"End ${id}"}` });
      expect(created.text).toBe(`{"id":"${id}","name":"End ${id}"}`);
      const read = await asStrings(`/plants/${id}`);
      expect(read.text).toBe(created.text);
    }
    for (const [asString, asNumber] of [
      ['"9223372036854775808"', '9223372036854775808'],
      ['"-9223372036854775809"', '-9223372036854775809'],
      ['"1.5"', '1.5'],
      ['"abc"', '"abc"'],
      ['" 7"', '"x"'],
      ['""', '"x"'],
    ] as const) {
      const stringAnswer = await asStrings('/plants', { body: `{"id":${asString},"name":"Fern"}` });
      const numberAnswer = await request(service.url, '/plants', { token, body: `{"id":${asNumber},"name":"Fern"}` });
      expectError(stringAnswer, 400, /^id must be an integer between -9223372036854775808 and 9223372036854775807$/);
      expect(stringAnswer.text, asString).toBe(numberAnswer.text);
    }
    expectError(await asStrings('/plants/9223372036854775808'), 400, /^id must be an integer between/);
    // Errors keep their shape: `error` is a number in either form.
    const missing = await asStrings('/plants/42');
    expect(missing.text).toBe('{"error":404,"message":"no plant with id 42"}');
  });

  it('pages written by the database come with string ids, a string `after` in the query and the Link', async () => {
    for (const id of [1n, 2n, 3n]) {
      await asStrings('/plants', { body: `{"id":"${id}","name":"Page ${id}","tag":"paged"}` });
    }
    const first = await asStrings('/plants?limit=2');
    expect(first.text).toBe(
      `[{"id":"${INT64_MIN}","name":"End ${INT64_MIN}"},{"id":"1","name":"Page 1","tag":"paged"}]`,
    );
    expect(first.headers.get('link')).toBe('<?limit=2&after=1>; rel="next"');
    const next = await asStrings('/plants?limit=2&after=1');
    expect(next.text).toBe('[{"id":"2","name":"Page 2","tag":"paged"},{"id":"3","name":"Page 3","tag":"paged"}]');
    const tagged = await asStrings('/plants?tag=paged&after=1');
    expect(tagged.text).toBe(next.text);
    // The same page without the header is the database's JSON, byte for byte what it was.
    expect((await request(service.url, '/plants?limit=2&after=1', { token })).text).toBe(
      '[{"id":2,"name":"Page 2","tag":"paged"},{"id":3,"name":"Page 3","tag":"paged"}]',
    );
    const last = await asStrings(`/plants?after=${ABOVE_2_53}`);
    expect(last.text).toBe(`[{"id":"${INT64_MAX}","name":"End ${INT64_MAX}"}]`);
  });

  it('webhook deliveries, a resend by a string path id, the audit log and tokens: every int64 a string', async () => {
    const subscribed = await asStrings('/webhooks', { body: JSON.stringify({ url: hook.url }) });
    expect(subscribed.status).toBe(201);
    const webhookId = (subscribed.body as { id: string }).id;
    await asStrings('/plants', { body: `{"id":"${INT64_MAX - 1n}","name":"Announced"}` });
    await hook.waitFor(1);
    // The webhook body is no answer to the request: JSON integers, whatever the creating request asked.
    expect(hook.received[0]?.body).toBe(`{"id":${INT64_MAX - 1n},"name":"Announced"}`);

    const listed = await eventually(async () => {
      const answer = await asStrings(`/webhooks/${webhookId}/deliveries`);
      return answer.text.includes('"delivered"') ? answer : undefined;
    });
    const [delivery] = listed.body as Array<{
      id: unknown;
      plantId: unknown;
      attempts: Array<{ statusCode: unknown }>;
    }>;
    expect(typeof delivery?.id).toBe('string');
    expect(delivery?.plantId).toBe(String(INT64_MAX - 1n));
    // An int32 stays a number.
    expect(delivery?.attempts[0]?.statusCode).toBe(200n);

    const resent = await asStrings(`/webhooks/${webhookId}/deliveries/${String(delivery?.id)}/resend`, {
      method: 'POST',
    });
    expect(resent.status).toBe(202);
    expect((resent.body as { id: unknown }).id).toBe(delivery?.id);

    expect((await asStrings(`/plants/${INT64_MAX - 1n}`, { method: 'DELETE' })).status).toBe(204);
    const audit = await asStrings('/audit-events?limit=100');
    const events = audit.body as Array<{ id: unknown; action: string }>;
    expect(events.map((event) => event.action)).toContain('plant.deleted');
    for (const event of events) expect(event.id).toMatch(/^\d+$/);
    const after = await asStrings(`/audit-events?after=${String(events[0]?.id)}`);
    expect((after.body as unknown[]).length).toBe(events.length - 1);

    // An operation without int64s answers as it always does, and still says which form it used.
    const tokens = await asStrings('/tokens');
    expect(tokens.status).toBe(200);
    const withoutUse = (text: string) => text.replaceAll(/"lastUsedAt":"[^"]*",?/g, '');
    expect(withoutUse(tokens.text)).toBe(withoutUse((await request(service.url, '/tokens', { token })).text));
    expect(tokens.headers.get('plant-store-int64')).toBe('string');
  });

  it('a change and the event feed: the PATCH answer, its ETag, GET /events: every int64 a string', async () => {
    const id = ABOVE_2_53 + 10n;
    const position = await asStrings('/events/cursor');
    expect(position.status).toBe(200);
    const { cursor } = position.body as { cursor: string };
    expect((await asStrings('/plants', { body: `{"id":"${id}","name":"Before"}` })).status).toBe(200);
    const changed = await asStrings(`/plants/${id}`, {
      method: 'PATCH',
      body: '{"name":"After"}',
      contentType: 'application/merge-patch+json',
    });
    expect(changed.text).toBe(`{"id":"${id}","name":"After"}`);
    const version = /^"([0-9]+)-string"$/.exec(changed.headers.get('etag') ?? '')?.[1];
    expect(version).toBeDefined();

    // The feed shows a change once every older transaction has ended: it may lag the answer.
    const feed = await eventually(async () => {
      const answer = await asStrings(`/events?after=${encodeURIComponent(cursor)}`);
      return (answer.body as unknown[]).length >= 2 ? answer : undefined;
    }, 30_000);
    const events = feed.body as Array<{ type: string; data: { id: unknown; name: string; version: unknown } }>;
    expect(events.map((event) => [event.type, event.data.id, event.data.name])).toEqual([
      ['plant.created', String(id), 'Before'],
      ['plant.updated', String(id), 'After'],
    ]);
    expect(typeof events[0]?.data.version).toBe('string');
    expect(events[1]?.data.version).toBe(version);
    // The same page without the header: JSON integers, exact.
    const plain = await request(service.url, `/events?after=${encodeURIComponent(cursor)}`, { token });
    expect(plain.text).toContain(`"id":${id},"name":"After"`);
    expect(plain.text).toContain(`"version":${version}`);
  });

  it('refuses another value of the header on every operation, before doing anything', async () => {
    for (const value of ['String', 'strings', 'string, string', '']) {
      const refused = await fetch(new URL('/plants', service.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'plant-store-int64': value },
        body: '{"id":"77","name":"Never stored"}',
      });
      expect(refused.status, value).toBe(400);
      expect(await refused.json()).toEqual({ error: 400, message: 'Plant-Store-Int64 must be "string" or "number"' });
      const listed = await fetch(new URL('/webhooks', service.url), {
        headers: { authorization: `Bearer ${token}`, 'plant-store-int64': value },
      });
      expect(listed.status, value).toBe(400);
    }
    expectError(await request(service.url, '/plants/77', { token }), 404);
  });
});
