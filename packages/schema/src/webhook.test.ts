import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { INT64_MAX } from './int64.js';
import { parseJson } from './json.js';
import { NewPlantSchema } from './plant.js';
import {
  CreatedWebhookSchema,
  DeliveryIdSchema,
  ListDeliveriesQuerySchema,
  NewWebhookSchema,
  PlantCreatedEventSchema,
  WEBHOOK_DESCRIPTION_MAX_LENGTH,
  WEBHOOK_URL_MAX_LENGTH,
  WebhookDeliveryListSchema,
  WebhookDeliverySchema,
  WebhookIdSchema,
  WebhookListSchema,
  WebhookSchema,
} from './webhook.js';

// Messages are written out: they are part of the contract, shown to clients as 400 messages.
const URL_LENGTH_MESSAGE = 'url must be a string of at most 2048 characters';
const URL_TEXT_MESSAGE = 'url must not contain spaces, control characters or lone surrogates';
const URL_FORM_MESSAGE = 'url must be an absolute http:// or https:// URL';
const URL_CREDENTIALS_MESSAGE = 'url must not contain credentials (user:password@)';
const URL_FRAGMENT_MESSAGE = 'url must not contain a fragment (#...)';
const DESCRIPTION_MESSAGE = 'description must be a string of at most 255 characters';

const ID = '0b8f7f9e-4f0c-4a57-9c59-6d8e3f1f2a10';
const EVENT_ID = 'msg_5b1d0c8e-2f6a-4d39-8d2e-93f0b7c1a4e2';
const CREATED_AT = '2026-11-23T10:48:07.123Z';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4Z5mCrxNB9o=';

interface Refusal {
  path: string | null;
  message: string;
}

function refusalsFor(schema: v.GenericSchema, input: unknown): Refusal[] {
  const result = v.safeParse(schema, input);
  if (result.success) return [];
  return result.issues.map((issue) => ({ path: v.getDotPath(issue), message: issue.message }));
}

/** The first refusal, as the service reports it (it parses with abortEarly). */
function firstMessage(schema: v.GenericSchema, input: unknown): string | undefined {
  const result = v.safeParse(schema, input, { abortEarly: true });
  return result.success ? undefined : result.issues[0].message;
}

describe('NewWebhookSchema: url', () => {
  it.each([
    'https://example.com/hooks/plants',
    'http://example.com',
    'HTTPS://EXAMPLE.COM/Path?Query=1',
    'https://example.com:8443/a%20b',
    'http://203.0.113.7:8080/hook',
    'http://[2001:db8::1]/hook',
    'https://bücher.example/hook',
    `https://example.com/${'a'.repeat(WEBHOOK_URL_MAX_LENGTH - 'https://example.com/'.length)}`,
  ])('accepts %s and keeps it exactly as given', (url) => {
    expect(v.parse(NewWebhookSchema, { url })).toStrictEqual({ url });
  });

  it('allows URLs of 2048 characters, counted in code points', () => {
    expect(WEBHOOK_URL_MAX_LENGTH).toBe(2048);
    const prefix = 'https://example.com/';
    const emoji = `${prefix}${'\u{1F331}'.repeat(WEBHOOK_URL_MAX_LENGTH - prefix.length)}`;
    expect(emoji.length).toBeGreaterThan(WEBHOOK_URL_MAX_LENGTH);
    expect(v.parse(NewWebhookSchema, { url: emoji }).url).toBe(emoji);
  });

  it.each([
    [
      '2049 characters',
      `https://example.com/${'a'.repeat(WEBHOOK_URL_MAX_LENGTH + 1 - 'https://example.com/'.length)}`,
    ],
    ['a number', 1],
    ['null', null],
    ['an object', { href: 'https://example.com' }],
  ])('refuses a url of %s with the length message', (_label, url) => {
    expect(refusalsFor(NewWebhookSchema, { url })).toEqual([{ path: 'url', message: URL_LENGTH_MESSAGE }]);
  });

  it.each([
    ['ftp:', 'ftp://example.com/hook'],
    ['file:', 'file:///etc/passwd'],
    ['javascript:', 'javascript:alert(1)'],
    ['mailto:', 'mailto:ops@example.com'],
    ['ws:', 'ws://example.com/socket'],
    ['a relative URL', '/hooks/plants'],
    ['a scheme-relative URL', '//example.com/hook'],
    ['a host without a scheme', 'example.com/hook'],
    ['http: without slashes (which the parser would read as http://example.com/)', 'http:example.com'],
    ['no host', 'http://'],
    ['a port out of range', 'http://example.com:99999/'],
    ['an empty string', ''],
  ])('refuses %s', (_label, url) => {
    expect(refusalsFor(NewWebhookSchema, { url })).toEqual([{ path: 'url', message: URL_FORM_MESSAGE }]);
  });

  it.each([
    ['user and password', 'https://user:secret@example.com/hook'],
    ['a user only', 'https://user@example.com/hook'],
    ['an empty user with a password', 'https://:secret@example.com/hook'],
  ])('refuses %s in the URL', (_label, url) => {
    expect(refusalsFor(NewWebhookSchema, { url })).toEqual([{ path: 'url', message: URL_CREDENTIALS_MESSAGE }]);
  });

  // The URL parser silently strips tabs and newlines and trims spaces: the address shown in
  // listings would not be the one called.
  it.each([
    ['a leading space', ' https://example.com/'],
    ['a trailing newline', 'https://example.com/\n'],
    ['a tab inside the host', 'https://exam\tple.com/'],
    ['a space in the path', 'https://example.com/a b'],
    ['a NUL', 'https://example.com/\u0000'],
    ['DEL', 'https://example.com/\u007f'],
    ['a lone surrogate', 'https://example.com/\uD83C'],
  ])('refuses %s', (_label, url) => {
    expect(refusalsFor(NewWebhookSchema, { url })).toContainEqual({ path: 'url', message: URL_TEXT_MESSAGE });
    expect(firstMessage(NewWebhookSchema, { url })).toBe(URL_TEXT_MESSAGE);
  });

  it.each(['https://example.com/hook#section', 'https://example.com/#'])(
    'refuses the fragment of %s: it never reaches the receiver',
    (url) => {
      expect(refusalsFor(NewWebhookSchema, { url })).toEqual([{ path: 'url', message: URL_FRAGMENT_MESSAGE }]);
    },
  );

  it('says url is required when it is missing', () => {
    expect(refusalsFor(NewWebhookSchema, {})).toEqual([{ path: 'url', message: 'url is required' }]);
    expect(refusalsFor(NewWebhookSchema, { description: 'x' })).toEqual([{ path: 'url', message: 'url is required' }]);
  });

  it('reports the first broken rule first: length, then characters, then form, then credentials', () => {
    expect(firstMessage(NewWebhookSchema, { url: `ftp://${'a'.repeat(3000)}` })).toBe(URL_LENGTH_MESSAGE);
    expect(firstMessage(NewWebhookSchema, { url: 'ftp://a b' })).toBe(URL_TEXT_MESSAGE);
    expect(firstMessage(NewWebhookSchema, { url: 'ftp://user:pw@example.com' })).toBe(URL_FORM_MESSAGE);
  });
});

describe('NewWebhookSchema: description and the object', () => {
  it('accepts an absent, empty or 255-character description and leaves an absent one absent', () => {
    const url = 'https://example.com/hook';
    const bare = v.parse(NewWebhookSchema, { url });
    expect('description' in bare).toBe(false);
    expect(v.parse(NewWebhookSchema, { url, description: '' })).toStrictEqual({ url, description: '' });
    const longest = '\u{1F331}'.repeat(WEBHOOK_DESCRIPTION_MAX_LENGTH);
    expect(v.parse(NewWebhookSchema, { url, description: longest }).description).toBe(longest);
  });

  it.each([
    ['256 characters', 'd'.repeat(256), DESCRIPTION_MESSAGE],
    ['null', null, DESCRIPTION_MESSAGE],
    ['a number', 5, DESCRIPTION_MESSAGE],
    ['a NUL character', 'a\u0000b', 'description must be valid Unicode text without NUL characters (U+0000)'],
  ])('refuses a description of %s', (_label, description, message) => {
    expect(refusalsFor(NewWebhookSchema, { url: 'https://example.com/hook', description })).toEqual([
      { path: 'description', message },
    ]);
  });

  it('strips unknown keys (a client cannot choose its own secret or id)', () => {
    const parsed = v.parse(NewWebhookSchema, {
      url: 'https://example.com/hook',
      description: 'ops',
      secret: 'whsec_mine',
      id: ID,
    });
    expect(parsed).toStrictEqual({ url: 'https://example.com/hook', description: 'ops' });
  });

  it('takes eventTypes: at least one known type, each once; absent when not sent', () => {
    const url = 'https://example.com/hook';
    expect(v.parse(NewWebhookSchema, { url })).toStrictEqual({ url });
    expect(v.parse(NewWebhookSchema, { url, eventTypes: ['plant.deleted', 'plant.created'] })).toStrictEqual({
      url,
      eventTypes: ['plant.deleted', 'plant.created'],
    });
    const message =
      'eventTypes must be a non-empty array of event types without repeats: plant.created, plant.updated, plant.deleted';
    for (const eventTypes of [[], ['plant.created', 'plant.created'], 'plant.created', null]) {
      expect(refusalsFor(NewWebhookSchema, { url, eventTypes })).toEqual([{ path: 'eventTypes', message }]);
    }
    // A subscription cannot choose the test event: it comes whatever it chose.
    for (const eventTypes of [['plant.moved'], ['webhook.test']]) {
      expect(refusalsFor(NewWebhookSchema, { url, eventTypes })).toEqual([{ path: 'eventTypes.0', message }]);
    }
  });

  it("keeps valibot's message for a body that is not an object", () => {
    expect(refusalsFor(NewWebhookSchema, 'https://example.com')).toEqual([
      { path: null, message: 'Invalid type: Expected Object but received "https://example.com"' },
    ]);
  });
});

describe('WebhookSchema and CreatedWebhookSchema', () => {
  const webhook = {
    id: ID,
    url: 'https://example.com/hook',
    team: 'inventory',
    createdAt: CREATED_AT,
    eventTypes: ['plant.created'],
    enabled: true,
  };

  it('reads a listed webhook, description optional, and never keeps a secret', () => {
    expect(v.parse(WebhookSchema, webhook)).toStrictEqual(webhook);
    expect(v.parse(WebhookSchema, { ...webhook, description: 'ops', secret: SECRET })).toStrictEqual({
      ...webhook,
      description: 'ops',
    });
    expect(v.parse(WebhookListSchema, [webhook, webhook])).toHaveLength(2);
  });

  it('reads a subscription from a service before event types (no eventTypes, no enabled)', () => {
    const { eventTypes: _, enabled: __, ...older } = webhook;
    expect(v.parse(WebhookSchema, older)).toStrictEqual(older);
    expect(v.parse(WebhookSchema, { ...webhook, eventTypes: ['plant.moved'] }).eventTypes).toEqual(['plant.moved']);
  });

  it('reads a created webhook with its secret', () => {
    expect(v.parse(CreatedWebhookSchema, { ...webhook, secret: SECRET })).toStrictEqual({ ...webhook, secret: SECRET });
  });

  it.each([
    ['a missing secret', { ...webhook }, { path: 'secret', message: 'secret is required' }],
    [
      'a secret without whsec_',
      { ...webhook, secret: 'MfKQ9r8GKYqrTwjU' },
      { path: 'secret', message: 'secret must be whsec_ followed by base64' },
    ],
    [
      'an id that is not a UUID',
      { ...webhook, id: '42', secret: SECRET },
      { path: 'id', message: 'id must be a UUID' },
    ],
    [
      'a date that is not RFC 3339',
      { ...webhook, createdAt: 'Mon, 23 Nov 2026 10:48:07 GMT', secret: SECRET },
      { path: 'createdAt', message: 'createdAt must be an RFC 3339 date-time string' },
    ],
    [
      'a url that is not a string',
      { ...webhook, url: null, secret: SECRET },
      { path: 'url', message: 'url must be a string' },
    ],
  ])('refuses %s', (_label, input, refusal) => {
    expect(refusalsFor(CreatedWebhookSchema, input)).toEqual([refusal]);
  });

  it('requires the owning team, named by the rules of token names', () => {
    const { team: _team, ...withoutTeam } = webhook;
    expect(refusalsFor(WebhookSchema, withoutTeam)).toEqual([{ path: 'team', message: 'team is required' }]);
    expect(refusalsFor(WebhookSchema, { ...webhook, team: 'no spaces' })).toEqual([
      { path: 'team', message: 'team must be 1-100 letters, digits, ".", "_" or "-", starting with a letter or digit' },
    ]);
  });

  it('reads a stored url as any string: a listing stays readable if the rules tighten', () => {
    expect(v.parse(WebhookSchema, { ...webhook, url: 'ftp://legacy.example/' }).url).toBe('ftp://legacy.example/');
  });
});

describe('WebhookIdSchema and DeliveryIdSchema', () => {
  it('takes a UUID in any case and refuses anything else', () => {
    expect(v.parse(WebhookIdSchema, ID)).toBe(ID);
    expect(v.parse(WebhookIdSchema, ID.toUpperCase())).toBe(ID.toUpperCase());
    for (const input of ['', '42', `${ID}0`, `{${ID}}`, ID.replaceAll('-', ''), 42]) {
      expect(refusalsFor(WebhookIdSchema, input)).toEqual([{ path: null, message: 'id must be a UUID' }]);
    }
  });

  it('takes an exact int64 delivery id', () => {
    expect(v.parse(DeliveryIdSchema, INT64_MAX)).toBe(INT64_MAX);
    expect(refusalsFor(DeliveryIdSchema, 'abc')).toEqual([
      { path: null, message: 'deliveryId must be an integer between -9223372036854775808 and 9223372036854775807' },
    ]);
  });
});

describe('WebhookDeliverySchema', () => {
  const pending = {
    id: 1n,
    webhookId: ID,
    eventId: EVENT_ID,
    plantId: 9007199254740993n,
    status: 'pending',
    nextAttemptAt: '2026-11-23T10:48:12.123Z',
    createdAt: CREATED_AT,
    attempts: [],
  };

  it('reads a delivery from JSON text with exact int64 ids and int32 status codes as numbers', () => {
    const text =
      `{"id":${INT64_MAX},"webhookId":"${ID}","eventId":"${EVENT_ID}","plantId":9007199254740993,` +
      `"status":"delivered","createdAt":"${CREATED_AT}","deliveredAt":"2026-11-23T10:48:13Z",` +
      `"attempts":[{"attemptedAt":"${CREATED_AT}","statusCode":503,"latencyMs":12,"error":"the receiver answered 503"},` +
      `{"attemptedAt":"2026-11-23T10:48:13Z","statusCode":204,"latencyMs":0}]}`;
    expect(v.parse(WebhookDeliverySchema, parseJson(text))).toStrictEqual({
      id: INT64_MAX,
      webhookId: ID,
      eventId: EVENT_ID,
      plantId: 9007199254740993n,
      status: 'delivered',
      createdAt: CREATED_AT,
      deliveredAt: '2026-11-23T10:48:13Z',
      attempts: [
        { attemptedAt: CREATED_AT, statusCode: 503, latencyMs: 12, error: 'the receiver answered 503' },
        { attemptedAt: '2026-11-23T10:48:13Z', statusCode: 204, latencyMs: 0 },
      ],
    });
  });

  it('reads a pending delivery with no attempt yet, and a list of them', () => {
    expect(v.parse(WebhookDeliverySchema, pending)).toStrictEqual(pending);
    expect(v.parse(WebhookDeliveryListSchema, [pending])).toStrictEqual([pending]);
  });

  it('reads an attempt without an answer (refused, timed out): no statusCode, an error', () => {
    const attempt = { attemptedAt: CREATED_AT, latencyMs: 10_000, error: 'no answer within 10000 ms' };
    expect(v.parse(WebhookDeliverySchema, { ...pending, attempts: [attempt] }).attempts).toEqual([attempt]);
  });

  it.each([
    ['an unknown status', { status: 'retrying' }, 'status', 'status must be one of pending, delivered, failed'],
    ['an event id without msg_', { eventId: ID }, 'eventId', 'eventId must be msg_ followed by a UUID'],
    [
      'a plant id beyond int64',
      { plantId: INT64_MAX + 1n },
      'plantId',
      'plantId must be an integer between -9223372036854775808 and 9223372036854775807',
    ],
    [
      'a null nextAttemptAt (absent, not null)',
      { nextAttemptAt: null },
      'nextAttemptAt',
      'nextAttemptAt must be an RFC 3339 date-time string',
    ],
    ['attempts that are not an array', { attempts: {} }, 'attempts', 'attempts must be an array'],
    [
      'a status code below 100',
      { attempts: [{ attemptedAt: CREATED_AT, statusCode: 99, latencyMs: 1 }] },
      'attempts.0.statusCode',
      'statusCode must be an integer between 100 and 599',
    ],
    [
      'a negative latency',
      { attempts: [{ attemptedAt: CREATED_AT, latencyMs: -1 }] },
      'attempts.0.latencyMs',
      'latencyMs must be an integer between 0 and 2147483647',
    ],
    [
      'a fractional latency',
      { attempts: [{ attemptedAt: CREATED_AT, latencyMs: 1.5 }] },
      'attempts.0.latencyMs',
      'latencyMs must be an integer between 0 and 2147483647',
    ],
  ])('refuses %s', (_label, change, path, message) => {
    expect(refusalsFor(WebhookDeliverySchema, { ...pending, ...change })).toEqual([{ path, message }]);
  });
});

describe('ListDeliveriesQuerySchema', () => {
  it('defaults limit to 20 and keeps an exact after', () => {
    expect(v.parse(ListDeliveriesQuerySchema, {})).toStrictEqual({ limit: 20 });
    expect(v.parse(ListDeliveriesQuerySchema, { limit: 100, after: INT64_MAX })).toStrictEqual({
      limit: 100,
      after: INT64_MAX,
    });
    expect(v.parse(ListDeliveriesQuerySchema, { limit: 1, after: 5 })).toStrictEqual({ limit: 1, after: 5n });
  });

  it.each([
    [{ limit: 0 }, 'limit must be an integer between 1 and 100'],
    [{ limit: 101 }, 'limit must be an integer between 1 and 100'],
    [{ limit: '5' }, 'limit must be an integer between 1 and 100'],
    [{ after: 'abc' }, 'after must be an integer between -9223372036854775808 and 9223372036854775807'],
    [{ after: INT64_MAX + 1n }, 'after must be an integer between -9223372036854775808 and 9223372036854775807'],
  ])('refuses %o with "%s"', (input, message) => {
    expect(firstMessage(ListDeliveriesQuerySchema, input)).toBe(message);
  });
});

describe('PlantCreatedEventSchema', () => {
  it('is the NewPlant schema: the event body is the created plant, id exact', () => {
    expect(PlantCreatedEventSchema).toBe(NewPlantSchema);
    expect(v.parse(PlantCreatedEventSchema, parseJson('{"id":9223372036854775807,"name":"Fern"}'))).toStrictEqual({
      id: INT64_MAX,
      name: 'Fern',
    });
  });
});
