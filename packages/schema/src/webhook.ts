import * as v from 'valibot';
import { WEBHOOK_EVENT_TYPES } from './events.js';
import { int32Schema, int64Schema } from './int64.js';
import { pageLimitSchema } from './list.js';
import { type NewPlant, NewPlantSchema } from './plant.js';
import { codePointLength, objectMessage, textSchema } from './text.js';
import { timestampSchema } from './timestamp.js';
import { TeamNameSchema } from './token.js';

/**
 * The WHATWG URL parser, which every runtime this package runs in provides (Node, browsers,
 * Deno, Bun). Declared here, for this module only, because the package compiles without DOM
 * or Node types: the declaration emits nothing and leaks into no consumer's types.
 */
declare const URL: new (
  input: string,
) => { readonly protocol: string; readonly username: string; readonly password: string };

export const WEBHOOK_URL_MAX_LENGTH = 2048;
export const WEBHOOK_DESCRIPTION_MAX_LENGTH = 255;
/** How many deliveries one `GET /webhooks/{id}/deliveries` page holds when the caller does not say. */
export const DELIVERIES_PAGE_DEFAULT_LIMIT = 20;
/** The most deliveries one page may hold. */
export const DELIVERIES_PAGE_MAX_LIMIT = 100;
/**
 * Most subscriptions a team may hold at once, by default (the service's WEBHOOKS_PER_TEAM_LIMIT
 * sets another): each receives every event, so each multiplies every create's writes.
 */
export const WEBHOOK_LIMIT = 100;

const URL_LENGTH_MESSAGE = `url must be a string of at most ${WEBHOOK_URL_MAX_LENGTH} characters`;
const URL_TEXT_MESSAGE = 'url must not contain spaces, control characters or lone surrogates';
const URL_FORM_MESSAGE = 'url must be an absolute http:// or https:// URL';
const URL_CREDENTIALS_MESSAGE = 'url must not contain credentials (user:password@)';
const URL_FRAGMENT_MESSAGE = 'url must not contain a fragment (#...)';

/**
 * Whether `text` has a space, a C0 control or DEL: the URL parser strips or refuses those, so
 * the URL called would not be the one shown in listings.
 */
function hasSpaceOrControl(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code <= 0x20 || code === 0x7f) return true;
  }
  return false;
}
/** The scheme, spelled out: `http:example.com` parses too, but is no way to write an address. */
const HTTP_PREFIX = /^https?:\/\//i;

function parseUrl(text: string): { protocol: string; username: string; password: string } | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

function isHttpUrl(text: string): boolean {
  const url = HTTP_PREFIX.test(text) ? parseUrl(text) : null;
  return url !== null && (url.protocol === 'http:' || url.protocol === 'https:');
}

/** No `user:password@`: the secret would sit in every listing, and the receiver authenticates by signature. */
function hasNoCredentials(text: string): boolean {
  const url = parseUrl(text);
  return url === null || (url.username === '' && url.password === '');
}

/**
 * Where a webhook's events are POSTed: an absolute http or https URL of at most 2048
 * characters, without credentials or fragment, exactly as given (not normalized). Whether its host may
 * be called (not a private or loopback address) is the service's check, which resolves it.
 */
export const WebhookUrlSchema = v.pipe(
  v.string((issue) => (issue.input === undefined ? 'url is required' : URL_LENGTH_MESSAGE)),
  v.description('Where events are POSTed: an absolute http or https URL without credentials or fragment'),
  v.metadata({ format: 'iri', maxLength: WEBHOOK_URL_MAX_LENGTH, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://' }),
  v.check((text) => codePointLength(text) <= WEBHOOK_URL_MAX_LENGTH, URL_LENGTH_MESSAGE),
  v.check((text) => !hasSpaceOrControl(text) && text.isWellFormed(), URL_TEXT_MESSAGE),
  v.check(isHttpUrl, URL_FORM_MESSAGE),
  v.check(hasNoCredentials, URL_CREDENTIALS_MESSAGE),
  // Never sent to the receiver: refused rather than stored and shown as if it were.
  v.check((text) => !text.includes('#'), URL_FRAGMENT_MESSAGE),
);

const descriptionEntry = {
  /** What the subscription is for, for the people who manage it: absent, or at most 255 characters. */
  description: v.exactOptional(
    textSchema('description', 0, WEBHOOK_DESCRIPTION_MAX_LENGTH, 'What the subscription is for, shown in listings'),
  ),
};

/** What a subscription receives unless it chooses: plant.created alone, as the NewPlant body. */
export const DEFAULT_WEBHOOK_EVENT_TYPES = ['plant.created'] as const;

const EVENT_TYPES_MESSAGE = `eventTypes must be a non-empty array of event types without repeats: ${WEBHOOK_EVENT_TYPES.join(', ')}`;

/**
 * The event types a subscription receives, as a caller chooses them: at least one, each once.
 * `["plant.created"]` alone (the default) keeps the NewPlant body; any other choice gets the
 * Standard Webhooks envelope for every type chosen.
 */
export const EventTypesSchema = v.pipe(
  v.array(v.picklist(WEBHOOK_EVENT_TYPES, EVENT_TYPES_MESSAGE), EVENT_TYPES_MESSAGE),
  v.description(
    `The event types it receives, at least one: ${WEBHOOK_EVENT_TYPES.join(', ')}. \`["plant.created"]\` alone (the default) receives the NewPlant as the body, as subscriptions always did; any other choice receives every chosen type as a Standard Webhooks envelope \`{type, timestamp, data}\`.`,
  ),
  v.metadata({ uniqueItems: true }),
  v.minLength(1, EVENT_TYPES_MESSAGE),
  v.check((types) => new Set(types).size === types.length, EVENT_TYPES_MESSAGE),
);

/** The body of `POST /webhooks`: `{ url, description?, eventTypes? }`. Unknown keys are stripped. */
export const NewWebhookSchema = v.object(
  { url: WebhookUrlSchema, ...descriptionEntry, eventTypes: v.exactOptional(EventTypesSchema) },
  objectMessage,
);
export type NewWebhook = v.InferOutput<typeof NewWebhookSchema>;

/** A webhook's id: a UUID. */
export const WebhookIdSchema = v.pipe(
  v.string('id must be a UUID'),
  v.description('The id of the webhook subscription'),
  v.uuid('id must be a UUID'),
);

/**
 * A subscription as listed: `{ id, url, description?, team, createdAt }`, never its secret. `url` is
 * read back as any string (not re-judged): a stored URL stays readable if the rules tighten.
 */
export const WebhookSchema = v.object(
  {
    id: WebhookIdSchema,
    url: v.pipe(
      v.string('url must be a string'),
      v.description('Where events are POSTed'),
      v.metadata({ format: 'iri' }),
    ),
    ...descriptionEntry,
    team: v.pipe(TeamNameSchema, v.description('The team that owns it: the team of the token that created it')),
    createdAt: timestampSchema('createdAt', 'When the subscription was created (RFC 3339)'),
    // Optional to a reader, though this version always sends them: a client that reads them
    // still reads a service from before they existed. Types are read as any strings: a later
    // version of the service may offer more.
    eventTypes: v.exactOptional(
      v.pipe(
        v.array(v.string('eventTypes must be an array of strings'), 'eventTypes must be an array of strings'),
        v.description(
          `The event types it receives (${WEBHOOK_EVENT_TYPES.join(', ')}); \`["plant.created"]\` alone receives the NewPlant body, any other choice the envelope. Always sent by this version (absent from a service before it: plant.created alone)`,
        ),
      ),
    ),
    enabled: v.exactOptional(
      v.pipe(
        v.boolean('enabled must be a boolean'),
        v.description(
          'false: it gets no new events, and its pending deliveries wait until it is enabled again (PATCH `{"enabled": true}`). Always sent by this version (absent from a service before it: enabled)',
        ),
      ),
    ),
    disabledAt: v.exactOptional(timestampSchema('disabledAt', 'When it was disabled (RFC 3339); absent while enabled')),
    disabledReason: v.exactOptional(
      v.pipe(
        v.string('disabledReason must be a string'),
        v.description(
          "Why it was disabled: by its owner, or because every attempt failed for the service's WEBHOOKS_DISABLE_AFTER_DAYS; absent while enabled",
        ),
      ),
    ),
    previousSecretExpiresAt: v.exactOptional(
      timestampSchema(
        'previousSecretExpiresAt',
        'After a secret rotation with a grace period: until when deliveries are signed with the previous secret too (RFC 3339); absent otherwise',
      ),
    ),
  },
  objectMessage,
);
export type Webhook = v.InferOutput<typeof WebhookSchema>;

const SECRET_MESSAGE = 'secret must be whsec_ followed by base64';

/** The answer of `POST /webhooks`: the subscription and its signing secret, shown this once only. */
export const CreatedWebhookSchema = v.object(
  {
    ...WebhookSchema.entries,
    secret: v.pipe(
      v.string(SECRET_MESSAGE),
      v.description(
        'The Standard Webhooks signing secret (whsec_ and base64): verify each event with it. Shown this once only; it is never listed.',
      ),
      v.metadata({ pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$' }),
      v.check((text) => /^whsec_[A-Za-z0-9+/]+={0,2}$/.test(text), SECRET_MESSAGE),
    ),
  },
  objectMessage,
);
export type CreatedWebhook = v.InferOutput<typeof CreatedWebhookSchema>;

/** The body of a `GET /webhooks` answer: every subscription, oldest first. */
export const WebhookListSchema = v.array(WebhookSchema);
export type WebhookList = v.InferOutput<typeof WebhookListSchema>;

/** A delivery's id, as `{deliveryId}` in paths and as `after` in queries: an int64. */
export const DeliveryIdSchema = int64Schema('deliveryId', 'The id of the delivery');

/** The most bytes of a receiver's answer body kept with each attempt. */
export const RESPONSE_EXCERPT_MAX_BYTES = 256;

/** What became of a delivery: still to be attempted, received (a 2xx answer), or given up on. */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** One try at delivering an event. */
export const WebhookDeliveryAttemptSchema = v.object(
  {
    attemptedAt: timestampSchema('attemptedAt', 'When the attempt started (RFC 3339)'),
    statusCode: v.exactOptional(
      int32Schema('statusCode', "The receiver's HTTP status; absent when no answer came", 100, 599),
    ),
    latencyMs: int32Schema('latencyMs', 'How long the attempt took, in milliseconds', 0),
    error: v.exactOptional(
      v.pipe(
        v.string('error must be a string'),
        v.description('Why the attempt failed, in a short sentence; absent for a 2xx'),
      ),
    ),
    responseExcerpt: v.exactOptional(
      v.pipe(
        v.string('responseExcerpt must be a string'),
        v.description(
          `The start of the receiver's answer body: at most ${RESPONSE_EXCERPT_MAX_BYTES} bytes of it, read as UTF-8 (a character cut at the end is left out; bytes that are not UTF-8, and NUL, show as U+FFFD); absent when no answer came or its body was empty`,
        ),
      ),
    ),
  },
  objectMessage,
);
export type WebhookDeliveryAttempt = v.InferOutput<typeof WebhookDeliveryAttemptSchema>;

const EVENT_ID_MESSAGE = 'eventId must be msg_ followed by a UUID';
const EVENT_ID = /^msg_[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$/;

/** An event's delivery to one subscription, with every attempt so far (oldest first). */
export const WebhookDeliverySchema = v.object(
  {
    id: int64Schema('id', 'The id of the delivery: ascending in creation order'),
    webhookId: v.pipe(WebhookIdSchema, v.description('The subscription it goes to')),
    eventId: v.pipe(
      v.string(EVENT_ID_MESSAGE),
      v.description(
        'The event: its webhook-id header, the same on every attempt and every subscription (receivers deduplicate by it)',
      ),
      v.metadata({ pattern: EVENT_ID.source }),
      v.check((text) => EVENT_ID.test(text), EVENT_ID_MESSAGE),
    ),
    // Added after plantId's time: optional, so a client that knew only plant.created still reads every delivery.
    eventType: v.exactOptional(
      v.pipe(
        v.string('eventType must be a string'),
        v.description(
          'What the event is: plant.created, plant.updated, plant.deleted, or webhook.test (sent by `POST /webhooks/{id}/test`). Always sent by this version; read any other value as a kind added later',
        ),
      ),
    ),
    plantId: int64Schema(
      'plantId',
      'The plant the event is about (created, changed or deleted); 0 for a webhook.test event, which is about no plant (see eventType)',
    ),
    status: v.pipe(
      v.picklist(DELIVERY_STATUSES, `status must be one of ${DELIVERY_STATUSES.join(', ')}`),
      v.description('pending: to be attempted (again); delivered: a 2xx answer came; failed: every attempt failed'),
    ),
    nextAttemptAt: v.exactOptional(
      timestampSchema('nextAttemptAt', 'When the next attempt is due (RFC 3339); present while pending'),
    ),
    createdAt: timestampSchema('createdAt', 'When the event was recorded (RFC 3339)'),
    deliveredAt: v.exactOptional(timestampSchema('deliveredAt', 'When a 2xx answer came (RFC 3339)')),
    attempts: v.pipe(
      v.array(WebhookDeliveryAttemptSchema, 'attempts must be an array'),
      v.description('Every attempt so far, oldest first'),
    ),
  },
  objectMessage,
);
export type WebhookDelivery = v.InferOutput<typeof WebhookDeliverySchema>;

/** The body of a `GET /webhooks/{id}/deliveries` answer: deliveries in ascending id order. */
export const WebhookDeliveryListSchema = v.array(WebhookDeliverySchema);
export type WebhookDeliveryList = v.InferOutput<typeof WebhookDeliveryListSchema>;

/** A delivery's status, as a filter: one of DELIVERY_STATUSES. */
export const DeliveryStatusSchema = v.pipe(
  v.picklist(DELIVERY_STATUSES, `status must be one of ${DELIVERY_STATUSES.join(', ')}`),
  v.description('pending, delivered or failed'),
);

/**
 * The query of `GET /webhooks/{id}/deliveries`: `limit` (1-100, default 20), `after` (a delivery
 * id) and `status` (only deliveries with it).
 */
export const ListDeliveriesQuerySchema = v.object({
  limit: pageLimitSchema(DELIVERIES_PAGE_DEFAULT_LIMIT, DELIVERIES_PAGE_MAX_LIMIT),
  after: v.exactOptional(
    int64Schema('after', 'Only deliveries whose id is greater than this one: the last id of the previous page'),
  ),
  status: v.exactOptional(v.pipe(DeliveryStatusSchema, v.description('Only deliveries with this status'))),
});
/** The parsed query: `limit` always set, `after` and `status` when given. */
export type ListDeliveriesQuery = v.InferOutput<typeof ListDeliveriesQuerySchema>;
/** What a caller may pass: every field optional, `after` as bigint (or a safe-integer number). */
export type ListDeliveriesQueryInput = v.InferInput<typeof ListDeliveriesQuerySchema>;

/**
 * The body of every `plant.created` event POSTed to a subscription: the NewPlant
 * `{ id, name, tag? }` of the plant just created (the same schema, so the same rules).
 */
export const PlantCreatedEventSchema = NewPlantSchema;
export type PlantCreatedEvent = NewPlant;
