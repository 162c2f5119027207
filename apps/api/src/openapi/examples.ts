import {
  ImportRejectedError,
  PlantConflictError,
  TokenLimitError,
  TokenNameTakenError,
  WebhookLimitError,
} from '@plant-store/db';
import {
  AUDIT_EVENTS_PAGE_MAX_LIMIT,
  type AuditEvent,
  type CreatedToken,
  type CreatedWebhook,
  DELIVERIES_PAGE_MAX_LIMIT,
  DeliveryIdSchema,
  EVENTS_PAGE_MAX_LIMIT,
  type EventList,
  ExportPlantsQuerySchema,
  ListAuditEventsQuerySchema,
  ListDeliveriesQuerySchema,
  ListEventsQuerySchema,
  ListPlantsQuerySchema,
  type NewPlantInput,
  NewPlantSchema,
  NewTokenSchema,
  NewWebhookSchema,
  type OperationDeclaration,
  type OperationId,
  type Operations,
  operationParameters,
  type ParameterName,
  PLANTS_PAGE_MAX_LIMIT,
  PlantIdSchema,
  PlantPatchSchema,
  RESEND_DELIVERIES_MAX,
  ResendDeliveriesSchema,
  RotateWebhookSecretSchema,
  type StoredPlant,
  type SuccessBodyOf,
  type Token,
  WEBHOOK_LIMIT,
  type Webhook,
  type WebhookDelivery,
  WebhookPatchSchema,
} from '@plant-store/schema';
import type * as v from 'valibot';
import { lineMessage, lineTooLongMessage } from '../http/ndjson-lines.js';
import { plantNotFound, versionMismatch } from '../routes/plants.js';
import { tokenNotFound } from '../routes/tokens.js';
import { deliveryNotFound, webhookNotFound } from '../routes/webhooks.js';
import {
  lifetimeMessage,
  otherTeamMessage,
  rateLimitMessage,
  scopeNotHeldMessage,
} from '../tokens/delegation-policy.js';
import { EXPIRES_AT_IN_PAST_MESSAGE } from '../tokens/issue-options.js';
import { describeStatus, describeTimeout } from '../webhooks/attempt-messages.js';
import { errorExample, validationMessage } from './openapi-parts.js';

/**
 * The examples the OpenAPI document shows, typed by the operations they illustrate: an example
 * that no longer fits its schema, or a declared error without one, does not compile. Error
 * messages are the service's own (its schemas, handlers and database errors), not copies.
 *
 * Example ids stay below 2^53: documentation renderers (Swagger UI on /docs) read JSON numbers
 * as doubles and would show larger ones rounded. The document says ids are exact.
 */

/** An error example: its summary, and the message the service answers. */
export type ErrorExample = readonly [summary: string, message: string];

type Examples<TValue> = Readonly<Record<string, TValue>>;

type OperationExamples<TOperation extends OperationDeclaration> = (TOperation extends {
  readonly body: { readonly schema: infer TSchema extends v.GenericSchema };
}
  ? { readonly body: Examples<v.InferInput<TSchema>> }
  : unknown) &
  (SuccessBodyOf<TOperation> extends undefined
    ? unknown
    : { readonly success: Examples<SuccessBodyOf<TOperation>> }) & {
    readonly errors: TOperation extends { readonly errors: infer TErrors }
      ? { readonly [TCode in keyof TErrors]: Examples<ErrorExample> }
      : never;
  };

const EXAMPLE_PLANT = { id: 4201n, name: 'Monstera deliciosa', tag: 'aroid' } satisfies StoredPlant;

/** New plants: the body of POST /plants, and of the plant-created event. */
export const NEW_PLANT_EXAMPLES: Examples<NewPlantInput> = {
  tagged: { ...EXAMPLE_PLANT },
  untagged: { id: 1n, name: 'Boston fern' },
};

const EXAMPLE_WEBHOOK = {
  id: '6f1c2a8e-3b4d-4e5f-8a9b-0c1d2e3f4a5b',
  url: 'https://hooks.example.com/plant-store',
  description: 'Inventory sync',
  team: 'inventory',
  createdAt: '2026-11-23T10:48:07.123Z',
  eventTypes: ['plant.created'],
  enabled: true,
} satisfies Webhook;
const EXAMPLE_UNDESCRIBED_WEBHOOK: Webhook = {
  id: '0b8f7f9e-4f0c-4a57-9c59-6d8e3f1f2a10',
  url: 'https://ops.example.org/hooks/plants',
  team: 'inventory',
  createdAt: '2026-11-24T08:00:00.000Z',
  eventTypes: ['plant.created', 'plant.updated', 'plant.deleted'],
  enabled: false,
  disabledAt: '2026-11-29T08:00:05.000Z',
  disabledReason: 'disabled by the service: every delivery attempt failed for 5 days (since 2026-11-24T08:00:04.512Z)',
};
const EXAMPLE_CREATED: CreatedWebhook = {
  ...EXAMPLE_WEBHOOK,
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4Z5mCrxNB9o=',
};
export const EXAMPLE_EVENT_ID = 'msg_5b1d0c8e-2f6a-4d39-8d2e-93f0b7c1a4e2';
const EXAMPLE_PENDING: WebhookDelivery = {
  id: 17n,
  webhookId: EXAMPLE_WEBHOOK.id,
  eventId: EXAMPLE_EVENT_ID,
  eventType: 'plant.created',
  plantId: 4201n,
  status: 'pending',
  nextAttemptAt: '2026-11-23T11:20:09.000Z',
  createdAt: '2026-11-23T10:50:01.250Z',
  attempts: [
    // The errors the dispatcher really records for these outcomes.
    {
      attemptedAt: '2026-11-23T10:50:01.262Z',
      statusCode: 503,
      latencyMs: 48,
      error: describeStatus(503) ?? '',
      responseExcerpt: '{"error":"maintenance until 11:30"}',
    },
    { attemptedAt: '2026-11-23T10:50:06.301Z', latencyMs: 10_000, error: describeTimeout(10_000) },
  ],
};
const EXAMPLE_DELIVERED: WebhookDelivery = {
  id: 18n,
  webhookId: EXAMPLE_WEBHOOK.id,
  eventId: 'msg_0e9d8c7b-6a5f-4e3d-9c2b-1a0f9e8d7c6b',
  eventType: 'plant.created',
  plantId: 5005n,
  status: 'delivered',
  createdAt: '2026-11-23T10:51:00.004Z',
  deliveredAt: '2026-11-23T10:51:00.090Z',
  attempts: [{ attemptedAt: '2026-11-23T10:51:00.012Z', statusCode: 200, latencyMs: 78, responseExcerpt: 'ok' }],
};

const EXAMPLE_TOKEN = {
  name: 'inventory-sync',
  team: 'inventory',
  scopes: ['plants:read', 'plants:write'],
  createdAt: '2026-11-23T10:48:07.123Z',
  expiresAt: '2031-11-23T00:00:00.000Z',
  lastUsedAt: '2026-11-25T08:14:00.512Z',
  rateLimit: { requests: 600, perSeconds: 60 },
} satisfies Token;
const EXAMPLE_ADMIN_TOKEN: Token = {
  name: 'inventory-admin',
  team: 'inventory',
  scopes: ['plants:read', 'plants:write', 'tokens:manage'],
  createdAt: '2026-11-20T09:00:00.000Z',
};
const EXAMPLE_AUDIT_EVENTS: AuditEvent[] = [
  {
    id: 1041n,
    occurredAt: '2026-11-23T10:48:07.130Z',
    team: 'inventory',
    actor: { kind: 'token', name: 'inventory-admin', team: 'inventory' },
    action: 'token.issued',
    target: 'inventory-sync',
    clientAddress: '203.0.113.7',
    details: { scopes: ['plants:read', 'plants:write'], expiresAt: '2027-11-23T00:00:00.000Z' },
  },
  {
    id: 1042n,
    occurredAt: '2026-11-23T11:02:51.004Z',
    team: 'inventory',
    actor: { kind: 'cli', name: 'ops' },
    action: 'token.revoked',
    target: 'reporting',
  },
];
const EXAMPLE_CREATED_TOKEN: CreatedToken = {
  name: EXAMPLE_TOKEN.name,
  team: EXAMPLE_TOKEN.team,
  scopes: EXAMPLE_TOKEN.scopes,
  createdAt: EXAMPLE_TOKEN.createdAt,
  expiresAt: EXAMPLE_TOKEN.expiresAt,
  rateLimit: EXAMPLE_TOKEN.rateLimit,
  token: 'pst_q8Vd3k2mZ0bW7xYtR4nL1pC9sH6jF5gA2eU8iO3vK0M',
};
const tokenBody = (input: unknown) => validationMessage(NewTokenSchema, input);

/** The example of each parameter that has one. */
export const PARAMETER_EXAMPLES: {
  readonly [TName in ParameterName]?: v.InferOutput<(typeof operationParameters)[TName]['schema']>;
} = {
  after: EXAMPLE_PLANT.id,
  id: EXAMPLE_PLANT.id,
  webhookId: EXAMPLE_WEBHOOK.id,
  deliveryId: EXAMPLE_PENDING.id,
  deliveriesAfter: EXAMPLE_PENDING.id,
  deliveriesStatus: 'failed',
  tokenName: EXAMPLE_TOKEN.name,
};

/** The last id of the example page, as the Link header's example names it. */
export const EXAMPLE_NEXT_AFTER = EXAMPLE_PLANT.id;

/** A paged listing's query refused, with the messages `querySchema` really gives. */
function pageQueryRefused(querySchema: v.GenericSchema, maxLimit: number): Examples<ErrorExample> {
  return {
    limit: ['limit out of range', validationMessage(querySchema, { limit: maxLimit + 1 })],
    after: ['after is not an int64', validationMessage(querySchema, { after: 'abc' })],
  };
}

const invalidPlantId = { invalidId: ['Path id is not an int64', validationMessage(PlantIdSchema, 'abc')] } as const;
const unknownPlant = { notFound: ['Unknown id', plantNotFound(EXAMPLE_PLANT.id).message] } as const;
const otherVersion = {
  mismatch: ['Another version than If-Match names', versionMismatch(EXAMPLE_PLANT.id, 17n).message],
} as const;
const EXAMPLE_EVENTS: EventList = [
  {
    cursor: '1841.7',
    eventId: 'msg_3f1c2a8e-3b4d-4e5f-8a9b-0c1d2e3f4a5b',
    type: 'plant.created',
    timestamp: '2026-11-27T10:48:07.123Z',
    data: { ...EXAMPLE_PLANT, version: 16n },
  },
  {
    cursor: '1846.8',
    eventId: 'msg_9a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
    type: 'plant.updated',
    timestamp: '2026-11-27T10:49:30.004Z',
    data: { ...EXAMPLE_PLANT, name: 'Monstera borsigiana', version: 17n },
  },
];
const notAUuid: ErrorExample = ['An id that is not a UUID', operationParameters.webhookId.malformedMessage];
const unknownWebhook = {
  unknownWebhook: ['Unknown id', webhookNotFound(EXAMPLE_WEBHOOK.id).message],
  notAUuid,
} as const;

export const OPERATION_EXAMPLES = {
  listPlants: {
    success: {
      page: [{ id: 1n, name: 'Boston fern' }, EXAMPLE_PLANT, { id: 5005n, name: 'Snake plant', tag: 'succulent' }],
    },
    errors: { 400: pageQueryRefused(ListPlantsQuerySchema, PLANTS_PAGE_MAX_LIMIT) },
  },
  createPlant: {
    body: NEW_PLANT_EXAMPLES,
    success: { plant: EXAMPLE_PLANT },
    errors: {
      400: {
        invalid: ['Invalid id', validationMessage(NewPlantSchema, { id: '1', name: 'Fern' })],
        name: ['Invalid name', validationMessage(NewPlantSchema, { id: 1, name: '' })],
      },
      409: { conflict: ['Same id, other content', new PlantConflictError(EXAMPLE_PLANT.id).message] },
    },
  },
  importPlants: {
    // Each example is one line of the body.
    body: {
      fern: { id: 1n, name: 'Boston fern' },
      monstera: { id: 4201n, name: 'Monstera deliciosa', tag: 'aroid' },
    },
    success: { counts: { lines: 3, stored: 2, alreadyStored: 1 } },
    errors: {
      400: {
        notJson: ['A line that is not JSON', lineMessage(2, 'not valid JSON: unexpected end of input')],
        rule: ['A rule of POST /plants broken', lineMessage(3, validationMessage(NewPlantSchema, { id: 3, name: '' }))],
        repeated: ['An id repeated with other content', ImportRejectedError.repeatedId(7, 2, EXAMPLE_PLANT.id).message],
        stored: ['An id stored with other content', ImportRejectedError.storedConflict(5, EXAMPLE_PLANT.id).message],
        tooLong: ['A line too long', lineTooLongMessage(4, 65_536)],
      },
    },
  },
  exportPlants: {
    // Each example is one line of the answer.
    success: { untagged: { id: 1n, name: 'Boston fern' }, tagged: EXAMPLE_PLANT },
    errors: {
      400: { tag: ['tag too long', validationMessage(ExportPlantsQuerySchema, { tag: 'x'.repeat(256) })] },
    },
  },
  getPlant: { success: { plant: EXAMPLE_PLANT }, errors: { 400: invalidPlantId, 404: unknownPlant } },
  updatePlant: {
    body: {
      rename: { name: 'Monstera borsigiana' },
      untag: { tag: null },
    },
    success: { plant: { ...EXAMPLE_PLANT, name: 'Monstera borsigiana' } },
    errors: {
      400: {
        ...invalidPlantId,
        name: ['Name null', validationMessage(PlantPatchSchema, { name: null })],
        id: ['Another id', "id cannot change: the body's id 1 is not the path's 4201"],
      },
      404: unknownPlant,
      412: otherVersion,
    },
  },
  deletePlant: { errors: { 400: invalidPlantId, 404: unknownPlant, 412: otherVersion } },
  listEvents: {
    success: { page: EXAMPLE_EVENTS },
    errors: {
      400: pageQueryRefused(ListEventsQuerySchema, EVENTS_PAGE_MAX_LIMIT),
      410: {
        expired: [
          'A cursor older than the events kept',
          'the events after cursor 12.3 are no longer kept: start again from GET /events/cursor and a full listing of the plants',
        ],
      },
    },
  },
  getEventCursor: { success: { cursor: { cursor: '1852.0' } }, errors: {} },
  listWebhooks: { success: { list: [EXAMPLE_WEBHOOK, EXAMPLE_UNDESCRIBED_WEBHOOK] }, errors: {} },
  createWebhook: {
    body: {
      described: { url: EXAMPLE_WEBHOOK.url, description: EXAMPLE_WEBHOOK.description },
      bare: { url: EXAMPLE_UNDESCRIBED_WEBHOOK.url },
    },
    success: { created: EXAMPLE_CREATED },
    errors: {
      400: {
        missing: ['No url', validationMessage(NewWebhookSchema, {})],
        scheme: ['Not http or https', validationMessage(NewWebhookSchema, { url: 'ftp://hooks.example.com/' })],
        credentials: [
          'Credentials in the URL',
          validationMessage(NewWebhookSchema, { url: 'https://user:secret@hooks.example.com/' }),
        ],
        // What checkWebhookUrl answers (a test holds these to it): it resolves names, so it cannot run here.
        private: [
          'A private or loopback address',
          'url host 127.0.0.1 is not a public address (loopback); webhooks are only sent to public addresses unless the service runs with WEBHOOKS_ALLOW_PRIVATE_NETWORKS=true',
        ],
        unresolvable: ['A name that does not resolve', 'url host hooks.invalid does not resolve'],
      },
      409: { limit: ['Too many webhooks', new WebhookLimitError(WEBHOOK_LIMIT, EXAMPLE_WEBHOOK.team).message] },
    },
  },
  deleteWebhook: { errors: { 404: unknownWebhook } },
  listWebhookDeliveries: {
    success: { page: [EXAMPLE_PENDING, EXAMPLE_DELIVERED] },
    errors: { 400: pageQueryRefused(ListDeliveriesQuerySchema, DELIVERIES_PAGE_MAX_LIMIT), 404: unknownWebhook },
  },
  resendWebhookDelivery: {
    success: { resent: { ...EXAMPLE_PENDING, nextAttemptAt: '2026-11-23T10:55:00.000Z' } },
    errors: {
      400: { deliveryId: ['deliveryId is not an int64', validationMessage(DeliveryIdSchema, 'abc')] },
      404: {
        unknownDelivery: ['Unknown delivery', deliveryNotFound(EXAMPLE_WEBHOOK.id, EXAMPLE_PENDING.id).message],
        notAUuid,
      },
    },
  },
  updateWebhook: {
    body: {
      types: { eventTypes: ['plant.created', 'plant.updated', 'plant.deleted'] },
      disable: { enabled: false },
      enable: { enabled: true },
      move: { url: 'https://hooks.example.com/plant-store/v2', description: null },
    },
    success: {
      changed: { ...EXAMPLE_WEBHOOK, eventTypes: ['plant.created', 'plant.updated', 'plant.deleted'] },
      disabled: {
        ...EXAMPLE_WEBHOOK,
        enabled: false,
        disabledAt: '2026-11-27T14:02:11.318Z',
        disabledReason: 'disabled by its owner (token inventory-admin)',
      },
    },
    errors: {
      400: {
        eventTypes: ['An unknown event type', validationMessage(WebhookPatchSchema, { eventTypes: ['plant.moved'] })],
        enabled: ['enabled null', validationMessage(WebhookPatchSchema, { enabled: null })],
        scheme: ['Not http or https', validationMessage(WebhookPatchSchema, { url: 'ftp://hooks.example.com/' })],
      },
      404: unknownWebhook,
    },
  },
  resendWebhookDeliveries: {
    body: {
      failed: {},
      range: { status: 'failed', after: 16n, through: 240n, createdFrom: '2026-11-23T10:00:00.000Z', limit: 50 },
    },
    success: { resent: { resent: 2, deliveryIds: [17n, 23n], hasMore: false } },
    errors: {
      400: {
        status: ['Unknown status', validationMessage(ResendDeliveriesSchema, { status: 'lost' })],
        limit: ['limit out of range', validationMessage(ResendDeliveriesSchema, { limit: RESEND_DELIVERIES_MAX + 1 })],
      },
      404: unknownWebhook,
    },
  },
  rotateWebhookSecret: {
    body: { day: {}, hour: { gracePeriodSeconds: 3600 }, now: { gracePeriodSeconds: 0 } },
    success: {
      rotated: {
        secret: 'whsec_3q2+7wAAhYdvXJkqkM0KX4b1bWZpZ2N8lS2o2kQ6rZ0=',
        previousSecretExpiresAt: '2026-11-28T14:05:00.000Z',
      },
      immediate: { secret: 'whsec_3q2+7wAAhYdvXJkqkM0KX4b1bWZpZ2N8lS2o2kQ6rZ0=' },
    },
    errors: {
      400: {
        grace: [
          'Grace period out of range',
          validationMessage(RotateWebhookSecretSchema, { gracePeriodSeconds: 10_000_000 }),
        ],
      },
      404: unknownWebhook,
    },
  },
  testWebhook: {
    success: {
      queued: {
        id: 19n,
        webhookId: EXAMPLE_WEBHOOK.id,
        eventId: 'msg_7c6b5a49-3827-4615-a4f3-e2d1c0b9a897',
        eventType: 'webhook.test',
        plantId: 0n,
        status: 'pending',
        nextAttemptAt: '2026-11-27T14:10:00.000Z',
        createdAt: '2026-11-27T14:10:00.000Z',
        attempts: [],
      },
    },
    errors: { 404: unknownWebhook },
  },
  listTokens: { success: { list: [EXAMPLE_ADMIN_TOKEN, EXAMPLE_TOKEN] }, errors: {} },
  createToken: {
    body: {
      limited: {
        name: EXAMPLE_TOKEN.name,
        scopes: ['plants:read', 'plants:write'],
        expiresAt: EXAMPLE_TOKEN.expiresAt,
        rateLimit: EXAMPLE_TOKEN.rateLimit,
      },
      plain: { name: 'reporting', scopes: ['plants:read'] },
    },
    success: { created: EXAMPLE_CREATED_TOKEN },
    errors: {
      400: {
        name: ['Name not allowed', tokenBody({ name: 'two words', scopes: ['plants:read'] })],
        scope: ['Unknown scope', tokenBody({ name: 'ci', scopes: ['plants:*'] })],
        past: ['Expiry in the past', EXPIRES_AT_IN_PAST_MESSAGE],
        rateLimit: [
          'Rate limit out of range',
          tokenBody({ name: 'ci', scopes: ['plants:read'], rateLimit: { requests: 0, perSeconds: 60 } }),
        ],
      },
      409: {
        taken: ['Name taken', new TokenNameTakenError(EXAMPLE_TOKEN.name).message],
        limit: ['Too many tokens', new TokenLimitError(EXAMPLE_TOKEN.team, 100).message],
      },
    },
  },
  revokeToken: {
    errors: {
      404: {
        unknown: ['No active token has this name', tokenNotFound('reporting').message],
        malformed: ['A name no token can have', operationParameters.tokenName.malformedMessage],
      },
    },
  },
  listAuditEvents: {
    success: { page: EXAMPLE_AUDIT_EVENTS },
    errors: { 400: pageQueryRefused(ListAuditEventsQuerySchema, AUDIT_EVENTS_PAGE_MAX_LIMIT) },
  },
} satisfies { readonly [TId in OperationId]: OperationExamples<Operations[TId]> };

/**
 * The 403s an operation answers besides a missing scope (its `forbiddenWhen`), as examples of
 * the 403 response: the service's own messages.
 */
export const FORBIDDEN_EXAMPLES: Partial<Record<OperationId, Record<string, ReturnType<typeof errorExample>>>> = {
  createToken: {
    scopeNotHeld: errorExample(403, scopeNotHeldMessage(['webhooks:manage']), 'A scope the token does not hold'),
    otherTeam: errorExample(403, otherTeamMessage('inventory'), 'Another team, without platform:admin'),
    lifetime: errorExample(403, lifetimeMessage(365, true), 'Longer than the platform allows'),
    rateLimit: errorExample(
      403,
      rateLimitMessage({ requests: 1_000_000, perSeconds: 1 }, { requests: 10_000, perSeconds: 10 }),
      'A larger rate limit than the platform allows',
    ),
  },
};
