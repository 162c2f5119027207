import { WEBHOOK_LIMIT, WebhookLimitError } from '@plant-store/db';
import {
  type CreatedWebhook,
  DELIVERIES_PAGE_DEFAULT_LIMIT,
  DELIVERIES_PAGE_MAX_LIMIT,
  DeliveryIdSchema,
  ErrorCode,
  ListDeliveriesQuerySchema,
  NewWebhookSchema,
  type Webhook,
  type WebhookDelivery,
} from '@plant-store/schema';
import { bodyTooLargeMessage, NOT_JSON_MESSAGE } from '../middleware/json-body.js';
import { describeStatus, describeTimeout } from '../webhooks/attempt-messages.js';
import {
  deliveryIdParameterSchema,
  listDeliveriesQuerySchemas,
  webhookDeliveryListSchema,
  webhookIdParameterSchema,
  webhookListSchema,
} from './json-schemas.js';
import {
  errorContent,
  errorExample,
  forbidden,
  JSON_TYPE,
  pageParameters,
  pageQueryRefused,
  ref,
  validationMessage,
} from './openapi-parts.js';

/** The webhook operations (`/webhooks...`) and the event they send (the document's `webhooks`). */

const SCOPE = 'webhooks:manage';

const EXAMPLE_WEBHOOK: Webhook = {
  id: '6f1c2a8e-3b4d-4e5f-8a9b-0c1d2e3f4a5b',
  url: 'https://hooks.example.com/plant-store',
  description: 'Inventory sync',
  createdAt: '2026-11-23T10:48:07.123Z',
};
const EXAMPLE_UNDESCRIBED_WEBHOOK: Webhook = {
  id: '0b8f7f9e-4f0c-4a57-9c59-6d8e3f1f2a10',
  url: 'https://ops.example.org/hooks/plants',
  createdAt: '2026-11-24T08:00:00.000Z',
};
const EXAMPLE_CREATED: CreatedWebhook = {
  ...EXAMPLE_WEBHOOK,
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4Z5mCrxNB9o=',
};
const EXAMPLE_EVENT_ID = 'msg_5b1d0c8e-2f6a-4d39-8d2e-93f0b7c1a4e2';
const EXAMPLE_PENDING: WebhookDelivery = {
  id: 17n,
  webhookId: EXAMPLE_WEBHOOK.id,
  eventId: EXAMPLE_EVENT_ID,
  plantId: 4201n,
  status: 'pending',
  nextAttemptAt: '2026-11-23T11:20:09.000Z',
  createdAt: '2026-11-23T10:50:01.250Z',
  attempts: [
    // The errors the dispatcher really records for these outcomes.
    { attemptedAt: '2026-11-23T10:50:01.262Z', statusCode: 503, latencyMs: 48, error: describeStatus(503) ?? '' },
    { attemptedAt: '2026-11-23T10:50:06.301Z', latencyMs: 10_000, error: describeTimeout(10_000) },
  ],
};
const EXAMPLE_DELIVERED: WebhookDelivery = {
  id: 18n,
  webhookId: EXAMPLE_WEBHOOK.id,
  eventId: 'msg_0e9d8c7b-6a5f-4e3d-9c2b-1a0f9e8d7c6b',
  plantId: 5005n,
  status: 'delivered',
  createdAt: '2026-11-23T10:51:00.004Z',
  deliveredAt: '2026-11-23T10:51:00.090Z',
  attempts: [{ attemptedAt: '2026-11-23T10:51:00.012Z', statusCode: 204, latencyMs: 78 }],
};
const EXAMPLE_RESENT: WebhookDelivery = {
  ...EXAMPLE_PENDING,
  nextAttemptAt: '2026-11-23T10:55:00.000Z',
};

const unknownWebhook = errorExample(ErrorCode.NotFound, `no webhook with id ${EXAMPLE_WEBHOOK.id}`, 'Unknown id');
const notAUuid = errorExample(
  ErrorCode.NotFound,
  'no webhook has this id (webhook ids are UUIDs)',
  'An id that is not a UUID',
);
const webhookNotFound = {
  description: 'No webhook has this id (an id that is not a UUID names none either). `error` is 404.',
  content: errorContent([ErrorCode.NotFound], { unknownWebhook, notAUuid }),
};

/** What every webhook operation may answer besides its own statuses. */
const COMMON_RESPONSES = {
  '401': ref('responses/Unauthorized'),
  '403': forbidden(SCOPE),
  '500': ref('responses/InternalError'),
  '503': ref('responses/DatabaseUnavailable'),
};

const SECURITY = [{ bearerAuth: [SCOPE] }];

/** `paths` entries for the webhook operations. */
export function webhookPaths({ bodyLimitBytes }: { readonly bodyLimitBytes: number }) {
  return {
    '/webhooks': {
      get: {
        operationId: 'listWebhooks',
        tags: ['webhooks'],
        summary: 'List webhook subscriptions',
        description: `Every registered webhook, oldest first (at most ${WEBHOOK_LIMIT}). Secrets are never listed. Requires the \`${SCOPE}\` scope.`,
        security: SECURITY,
        responses: {
          '200': {
            description: 'The subscriptions, oldest first (empty when none).',
            content: {
              [JSON_TYPE]: {
                schema: webhookListSchema(),
                examples: { list: { value: [EXAMPLE_WEBHOOK, EXAMPLE_UNDESCRIBED_WEBHOOK] } },
              },
            },
          },
          ...COMMON_RESPONSES,
        },
      },
      post: {
        operationId: 'createWebhook',
        tags: ['webhooks'],
        summary: 'Register a webhook',
        description: [
          'Registers a receiver: from now on, every plant created is POSTed to `url` (see the `plant.created` webhook of this document for the request it gets).',
          'The answer carries the signing `secret`, shown this once only: keep it to verify signatures.',
          'The URL must be an absolute http or https URL of at most 2048 characters, without credentials or fragment, whose host is a public address (a name must resolve to public addresses only); private, loopback and link-local addresses are refused unless the service runs with `WEBHOOKS_ALLOW_PRIVATE_NETWORKS=true`.',
          `At most ${WEBHOOK_LIMIT} webhooks may be registered.`,
          `Body: \`application/json\` (UTF-8), at most ${bodyLimitBytes} bytes; unknown fields are ignored.`,
          `Requires the \`${SCOPE}\` scope.`,
        ].join(' '),
        security: SECURITY,
        requestBody: {
          description: 'The receiver to register',
          required: true,
          content: {
            [JSON_TYPE]: {
              schema: ref('schemas/NewWebhook'),
              examples: {
                described: { value: { url: EXAMPLE_WEBHOOK.url, description: EXAMPLE_WEBHOOK.description } },
                bare: { value: { url: EXAMPLE_UNDESCRIBED_WEBHOOK.url } },
              },
            },
          },
        },
        responses: {
          '201': {
            description: 'Registered: the subscription with its signing secret (shown this once only).',
            content: {
              [JSON_TYPE]: { schema: ref('schemas/CreatedWebhook'), examples: { created: { value: EXAMPLE_CREATED } } },
            },
          },
          '400': {
            description:
              'The body or its URL is refused: not JSON, a missing or ill-formed field, a URL that is not http(s), carries credentials or a fragment, or whose host is not a public address or does not resolve. `error` is 400.',
            content: errorContent([ErrorCode.InvalidRequest], {
              missing: errorExample(ErrorCode.InvalidRequest, validationMessage(NewWebhookSchema, {}), 'No url'),
              scheme: errorExample(
                ErrorCode.InvalidRequest,
                validationMessage(NewWebhookSchema, { url: 'ftp://hooks.example.com/' }),
                'Not http or https',
              ),
              credentials: errorExample(
                ErrorCode.InvalidRequest,
                validationMessage(NewWebhookSchema, { url: 'https://user:secret@hooks.example.com/' }),
                'Credentials in the URL',
              ),
              private: errorExample(
                ErrorCode.InvalidRequest,
                'url host 127.0.0.1 is not a public address (loopback); webhooks are only sent to public addresses unless the service runs with WEBHOOKS_ALLOW_PRIVATE_NETWORKS=true',
                'A private or loopback address',
              ),
              unresolvable: errorExample(
                ErrorCode.InvalidRequest,
                'url host hooks.invalid does not resolve',
                'A name that does not resolve',
              ),
            }),
          },
          ...COMMON_RESPONSES,
          '409': {
            description: `${WEBHOOK_LIMIT} webhooks are registered already: delete one first. \`error\` is 409.`,
            content: errorContent([ErrorCode.Conflict], {
              limit: errorExample(
                ErrorCode.Conflict,
                new WebhookLimitError(WEBHOOK_LIMIT).message,
                'Too many webhooks',
              ),
            }),
          },
          '413': {
            description: `The body is larger than ${bodyLimitBytes} bytes. \`error\` is 413.`,
            content: errorContent([ErrorCode.BodyTooLarge], {
              tooLarge: errorExample(ErrorCode.BodyTooLarge, bodyTooLargeMessage(bodyLimitBytes), 'Body too large'),
            }),
          },
          '415': {
            description: 'The body is not `application/json`, or not UTF-8. `error` is 415.',
            content: errorContent([ErrorCode.UnsupportedMediaType], {
              notJson: errorExample(ErrorCode.UnsupportedMediaType, NOT_JSON_MESSAGE, 'Not JSON'),
            }),
          },
        },
      },
    },
    '/webhooks/{id}': {
      parameters: [ref('parameters/webhookId')],
      delete: {
        operationId: 'deleteWebhook',
        tags: ['webhooks'],
        summary: 'Delete a webhook',
        description: `Removes the subscription and its deliveries: nothing more is sent to it, pending retries included. Requires the \`${SCOPE}\` scope.`,
        security: SECURITY,
        responses: {
          '204': { description: 'Deleted' },
          '404': webhookNotFound,
          ...COMMON_RESPONSES,
        },
      },
    },
    '/webhooks/{id}/deliveries': {
      parameters: [ref('parameters/webhookId')],
      get: {
        operationId: 'listWebhookDeliveries',
        tags: ['webhooks'],
        summary: "List a webhook's deliveries",
        description: [
          'Every event sent (or to be sent) to this webhook, in ascending id order (oldest first), one page at a time, each with every attempt so far.',
          'Paged like `GET /plants`: when more deliveries follow, the `Link` header carries the next page (`rel="next"`); or pass the last `id` of a page as `after`.',
          `Requires the \`${SCOPE}\` scope.`,
        ].join(' '),
        security: SECURITY,
        parameters: [ref('parameters/deliveriesLimit'), ref('parameters/deliveriesAfter')],
        responses: {
          '200': {
            description: 'The page of deliveries, in ascending id order (empty when none).',
            headers: { Link: ref('headers/Link') },
            content: {
              [JSON_TYPE]: {
                schema: webhookDeliveryListSchema(),
                examples: { page: { value: [EXAMPLE_PENDING, EXAMPLE_DELIVERED] } },
              },
            },
          },
          '400': pageQueryRefused(ListDeliveriesQuerySchema, DELIVERIES_PAGE_MAX_LIMIT),
          '404': webhookNotFound,
          ...COMMON_RESPONSES,
        },
      },
    },
    '/webhooks/{id}/deliveries/{deliveryId}/resend': {
      parameters: [ref('parameters/webhookId'), ref('parameters/deliveryId')],
      post: {
        operationId: 'resendWebhookDelivery',
        tags: ['webhooks'],
        summary: 'Resend a delivery',
        description: [
          'Queues the delivery to be attempted again now, whatever its status: a delivered one is sent once more; a failed one gets that one attempt (and is failed again if it fails too); a pending one goes on with its retry schedule.',
          'Attempts already made are kept, and count towards the schedule. The body, if any, is ignored.',
          `Requires the \`${SCOPE}\` scope.`,
        ].join(' '),
        security: SECURITY,
        responses: {
          '202': {
            description: 'Queued: the delivery, pending, due now.',
            content: {
              [JSON_TYPE]: { schema: ref('schemas/WebhookDelivery'), examples: { resent: { value: EXAMPLE_RESENT } } },
            },
          },
          '400': {
            description: 'The path deliveryId is not an int64. `error` is 400.',
            content: errorContent([ErrorCode.InvalidRequest], {
              deliveryId: errorExample(
                ErrorCode.InvalidRequest,
                validationMessage(DeliveryIdSchema, 'abc'),
                'deliveryId is not an int64',
              ),
            }),
          },
          '404': {
            description: 'This webhook has no delivery with this id (or there is no such webhook). `error` is 404.',
            content: errorContent([ErrorCode.NotFound], {
              unknownDelivery: errorExample(
                ErrorCode.NotFound,
                `webhook ${EXAMPLE_WEBHOOK.id} has no delivery with id ${EXAMPLE_PENDING.id}`,
                'Unknown delivery',
              ),
              notAUuid,
            }),
          },
          ...COMMON_RESPONSES,
        },
      },
    },
  };
}

/** `components.parameters` entries of the webhook operations. */
export function webhookParameters() {
  const page = pageParameters(listDeliveriesQuerySchemas(), {
    noun: 'deliveries',
    defaultLimit: DELIVERIES_PAGE_DEFAULT_LIMIT,
    maxLimit: DELIVERIES_PAGE_MAX_LIMIT,
    exampleAfter: EXAMPLE_PENDING.id,
  });
  return {
    webhookId: {
      name: 'id',
      in: 'path',
      description: 'ID of the webhook (a UUID)',
      required: true,
      schema: webhookIdParameterSchema(),
      example: EXAMPLE_WEBHOOK.id,
    },
    deliveryId: {
      name: 'deliveryId',
      in: 'path',
      description: 'ID of the delivery',
      required: true,
      schema: deliveryIdParameterSchema(),
      example: EXAMPLE_PENDING.id,
    },
    deliveriesLimit: page.limit,
    deliveriesAfter: page.after,
  };
}

/**
 * The document's `webhooks`: the request the service sends to every registered URL when a
 * plant is created. Named `/plant/webhook`, as in the upstream "OpenAPI Plant Store" sample.
 */
export function plantCreatedWebhook() {
  return {
    '/plant/webhook': {
      post: {
        operationId: 'plantCreated',
        tags: ['webhooks'],
        summary: 'A plant was created',
        description: [
          'Information about a new plant added to the store, POSTed to every registered webhook when a plant is created (a create that is replayed, with the same id and content, sends nothing).',
          'Signed as [Standard Webhooks](https://www.standardwebhooks.com/) specify: verify `webhook-signature` with the secret shown at registration, over `webhook-id`, `webhook-timestamp` and the exact body bytes (the `standardwebhooks` libraries do it), and refuse old timestamps.',
          'At-least-once: the same event may arrive more than once (a retry after a lost answer, a resend); deduplicate by `webhook-id`. Events may arrive out of order.',
          'The body is the NewPlant; `id` is an exact int64 (read it with a JSON parser that keeps big integers). Sent with `User-Agent: plant-store-webhooks/1`; redirects are never followed.',
        ].join(' '),
        security: [],
        parameters: [
          {
            name: 'webhook-id',
            in: 'header',
            required: true,
            description:
              'The event id: `msg_` and a UUID, the same on every attempt and for every subscription. Deduplicate by it.',
            schema: { type: 'string', pattern: '^msg_[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}$' },
            example: EXAMPLE_EVENT_ID,
          },
          {
            name: 'webhook-timestamp',
            in: 'header',
            required: true,
            description:
              'When this attempt was signed, in whole seconds since the Unix epoch. Refuse ones far from now (replays).',
            schema: { type: 'integer', format: 'int64', minimum: 0 },
            example: 1795430887,
          },
          {
            name: 'webhook-signature',
            in: 'header',
            required: true,
            description:
              'Space-separated signatures `v1,<base64>`: HMAC-SHA256 with the secret (its base64 after `whsec_`) over `<webhook-id>.<webhook-timestamp>.<body>`.',
            schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/]+={0,2}( v1,[A-Za-z0-9+/]+={0,2})*$' },
            example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
          },
        ],
        requestBody: {
          description: 'Information about a new plant added to the store',
          required: true,
          content: {
            [JSON_TYPE]: {
              schema: ref('schemas/NewPlant'),
              examples: {
                tagged: { value: { id: 4201n, name: 'Monstera deliciosa', tag: 'aroid' } },
                untagged: { value: { id: 1n, name: 'Boston fern' } },
              },
            },
          },
        },
        responses: {
          '2XX': {
            description: 'Acknowledged: the delivery is done. Answer quickly (within 10 s); the body is ignored.',
          },
          default: {
            description:
              'Anything else (a 3xx included: redirects are not followed), or no answer within 10 s, fails the attempt: the delivery is retried, by default after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (each ±20%), then marked failed. `POST /webhooks/{id}/deliveries/{deliveryId}/resend` sends it again.',
          },
        },
      },
    },
  };
}
