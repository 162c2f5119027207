import { AuditEventListSchema, ListAuditEventsQuerySchema } from '../audit.js';
import { EventFeedPositionSchema, EventListSchema, ListEventsQuerySchema } from '../events.js';
import { ListPlantsQuerySchema, PlantListSchema } from '../list.js';
import { NewPlantSchema, PlantPatchSchema, StoredPlantSchema } from '../plant.js';
import {
  CreatedTokenSchema,
  NewTokenSchema,
  TOKEN_RATE_LIMIT_MAX_REQUESTS,
  TOKEN_RATE_LIMIT_MAX_SECONDS,
  TokenListSchema,
} from '../token.js';
import { EXPORT_CURSOR_HEADER, ExportPlantsQuerySchema, ImportResultSchema, NDJSON_TYPE } from '../transfer.js';
import {
  CreatedWebhookSchema,
  ListDeliveriesQuerySchema,
  NewWebhookSchema,
  WEBHOOK_LIMIT,
  WEBHOOK_URL_MAX_LENGTH,
  WebhookDeliveryListSchema,
  WebhookDeliverySchema,
  WebhookListSchema,
  WebhookSchema,
} from '../webhook.js';
import {
  RotatedWebhookSecretSchema,
  RotateWebhookSecretSchema,
  SECRET_GRACE_PERIOD_DEFAULT_SECONDS,
  WebhookPatchSchema,
} from '../webhook-changes.js';
import { RESEND_DELIVERIES_MAX, ResendDeliveriesSchema, ResentDeliveriesSchema } from '../webhook-resend.js';
import type { OperationDeclaration } from './operation.js';

const PAGE_QUERY_REFUSED = 'A query parameter is ill-formed or out of range, or given twice.';
const NO_SUCH_WEBHOOK =
  "No webhook of the token's team has this id (another team's subscription answers as if it did not exist; an id that is not a UUID names none either).";

/**
 * Every operation of the HTTP contract, declared once, by operation id. The service mounts a
 * handler for each (and for nothing else), the OpenAPI document is written from them, and the
 * client takes their methods, paths and success statuses from here.
 */
export const operations = {
  listPlants: {
    method: 'GET',
    path: '/plants',
    tag: 'plants',
    scope: 'plants:read',
    summary: 'List plants',
    description: [
      'Returns the plants in the store, in ascending `id` order, one page at a time.',
      'When more plants follow, the `Link` header carries the next page (`rel="next"`); walk the store by following it, or pass the last `id` of a page as `after`.',
    ].join(' '),
    parameters: ['limit', 'tag', 'after'],
    query: ListPlantsQuerySchema,
    success: {
      status: 200,
      description: 'Plant response: the page of plants, in ascending id order (empty when none match).',
      schema: PlantListSchema,
      paged: true,
    },
    errors: { 400: PAGE_QUERY_REFUSED },
  },
  createPlant: {
    method: 'POST',
    path: '/plants',
    tag: 'plants',
    scope: 'plants:write',
    summary: 'Create a plant',
    description: [
      'Creates a new plant in the store. Retry-safe: the same `id` with the same `name` and `tag` answers 200 again with the stored plant and changes nothing; the same `id` with other content answers 400 with `error` 409.',
      'A 200 means the plant is committed. After the plant was changed (`PATCH`), a replay of its original create is other content: 400 with `error` 409.',
    ].join(' '),
    body: { schema: NewPlantSchema, description: 'Plant to add to the store' },
    success: {
      status: 200,
      description: 'Plant response: the stored plant, with its id; its version in `ETag`.',
      schema: StoredPlantSchema,
      etag: true,
    },
    errors: { 400: 'invalid body', 409: 'the id exists with other content' },
    clientFaultsAs400: true,
  },
  // Before getPlant: `/plants/export` is a path of its own, not the plant `export`.
  importPlants: {
    method: 'POST',
    path: '/plants/import',
    tag: 'plants',
    scope: 'plants:write',
    summary: 'Import plants',
    description: [
      `Creates many plants in one request: the body is NDJSON (\`${NDJSON_TYPE}\`, gzip allowed), one NewPlant object a line, read as it arrives (no body size limit, and no request timeout while it is sent; each line at most the JSON body limit).`,
      "All or nothing: a line that is not a JSON object, breaks a rule of `POST /plants`, repeats an earlier line's id with other content, or names an id stored with other content stops the import with a 400 naming the line (and the earlier line), and nothing of it is stored.",
      'A line whose id is already stored with the same name and tag counts as stored, as a replay of `POST /plants` does: an import retried after a lost answer succeeds. A line repeating an earlier one exactly is counted once.',
      'The plants created are announced as `plant.created`, in the event feed and to subscriptions, like any create; the import is recorded in the audit log (`plants.imported`).',
    ].join(' '),
    body: {
      schema: NewPlantSchema,
      description: 'The plants, one NewPlant JSON object a line',
      mediaTypes: [NDJSON_TYPE],
    },
    streamed: 'request',
    success: {
      status: 200,
      description: 'Every line is stored (committed): how many lines, plants created and ids already stored.',
      schema: ImportResultSchema,
    },
    errors: {
      400: "A line is not a JSON object, breaks a rule of `POST /plants`, is longer than the limit, repeats an earlier line's id with other content, or names an id stored with other content (the message names the line); or the body was cut short or does not decode. Nothing of the import is stored.",
    },
  },
  exportPlants: {
    method: 'GET',
    path: '/plants/export',
    tag: 'plants',
    scope: 'plants:read',
    summary: 'Export plants',
    description: [
      `Every plant (or every plant with \`tag\`) as NDJSON (\`${NDJSON_TYPE}\`), one StoredPlant object a line, in ascending \`id\` order, from one consistent snapshot of the store, streamed as it is read (gzip with \`Accept-Encoding: gzip\`).`,
      `The \`${EXPORT_CURSOR_HEADER}\` header is the event feed's cursor of that snapshot: to keep a copy, load the export, then follow \`GET /events?after=\` from that cursor (drop an event whose \`data.version\` is lower than the one you hold).`,
      'A body that stops before its end (the connection closes without the last chunk) is incomplete: start again.',
    ].join(' '),
    parameters: ['tag'],
    query: ExportPlantsQuerySchema,
    streamed: 'response',
    success: {
      status: 200,
      description: 'The plants, one JSON object a line, in ascending id order.',
      schema: StoredPlantSchema,
    },
    errors: { 400: PAGE_QUERY_REFUSED },
  },
  getPlant: {
    method: 'GET',
    path: '/plants/{id}',
    tag: 'plants',
    scope: 'plants:read',
    summary: 'Fetch a plant',
    description:
      'Returns the plant with this id, its version in `ETag`. With `If-None-Match` naming the version the client holds, 304 without a body when it is still current.',
    parameters: ['id'],
    preconditions: ['If-None-Match'],
    success: {
      status: 200,
      description: 'Plant response; its version in `ETag`.',
      schema: StoredPlantSchema,
      etag: true,
    },
    errors: { 400: 'The path id is not an int64.', 404: 'No plant has this id.' },
  },
  updatePlant: {
    method: 'PATCH',
    path: '/plants/{id}',
    tag: 'plants',
    scope: 'plants:write',
    summary: 'Change a plant',
    description: [
      'Applies a JSON merge patch (RFC 7396) of `name` and `tag`: a field absent is kept, `"tag": null` removes the tag; `id`, when sent, must be the path\'s.',
      'The same rules and messages as `POST /plants`; the HTTP status of an error is its `error` code.',
      'With `If-Match` naming versions (`ETag`s), only while the plant has one of them (412 otherwise). A change takes a new version (never one the id had before) and is announced as `plant.updated`; a patch that changes nothing writes nothing and answers the plant as it is.',
    ].join(' '),
    parameters: ['id'],
    preconditions: ['If-Match'],
    body: {
      schema: PlantPatchSchema,
      description: 'A JSON merge patch of the plant',
      mediaTypes: ['application/merge-patch+json', 'application/json'],
    },
    success: {
      status: 200,
      description: 'The plant as it is now; its version in `ETag`.',
      schema: StoredPlantSchema,
      etag: true,
    },
    errors: {
      400: "The path id is not an int64, the body is not a merge patch of the plant (a rule of `POST /plants` broken, `name` null), or `id` is not the path's.",
      404: 'No plant has this id.',
      412: 'The plant has none of the versions If-Match names.',
    },
  },
  deletePlant: {
    method: 'DELETE',
    path: '/plants/{id}',
    tag: 'plants',
    scope: 'plants:write',
    summary: 'Delete a plant',
    description:
      'Deletes a single plant based on the ID supplied, announced as `plant.deleted`; afterwards the id may be created again (with a new version). With `If-Match` naming versions, only while the plant has one of them (412 otherwise).',
    parameters: ['id'],
    preconditions: ['If-Match'],
    success: { status: 204, description: 'Plant deleted' },
    errors: {
      400: 'The path id is not an int64.',
      404: 'No plant has this id.',
      412: 'The plant has none of the versions If-Match names.',
    },
  },
  listEvents: {
    method: 'GET',
    path: '/events',
    tag: 'events',
    scope: 'plants:read',
    summary: 'List events',
    description: [
      'Every change to a plant (created, updated, deleted), in the order the changes committed, one page at a time: a later page never holds an event that committed before one already returned.',
      'Each event is the envelope a webhook receives, with its `cursor`: pass the last one as `after` for the next page, or follow the `Link` header (`rel="next"`).',
      'To mirror the store: take `GET /events/cursor`, list every plant with `GET /plants`, then apply the events after that cursor (drop an event whose `data.version` is lower than the one you hold).',
      "Events are kept for the service's `WEBHOOKS_RETENTION_DAYS` (30 by default); a cursor older than that answers 410.",
    ].join(' '),
    parameters: ['eventsLimit', 'eventsAfter', 'eventType'],
    query: ListEventsQuerySchema,
    success: {
      status: 200,
      description: "The page of events, in the feed's order (empty when none follow).",
      schema: EventListSchema,
      paged: true,
    },
    errors: {
      400: PAGE_QUERY_REFUSED,
      410: 'The cursor is older than the events kept: what followed it is gone. Start again from `GET /events/cursor` and a full listing.',
    },
  },
  getEventCursor: {
    method: 'GET',
    path: '/events/cursor',
    tag: 'events',
    scope: 'plants:read',
    summary: 'Where the feed stands',
    description:
      "The feed's current cursor, without reading the feed: every event listed so far comes before it, every one that shows later after it. Take it before a full listing of the plants, then follow the feed from it.",
    success: { status: 200, description: 'The current cursor.', schema: EventFeedPositionSchema },
    errors: {},
  },
  listWebhooks: {
    method: 'GET',
    path: '/webhooks',
    tag: 'webhooks',
    scope: 'webhooks:manage',
    summary: 'List webhook subscriptions',
    description:
      "The token's team's webhooks, oldest first (every team's with `platform:admin`). Secrets are never listed.",
    success: {
      status: 200,
      description: 'The subscriptions, oldest first (empty when none).',
      schema: WebhookListSchema,
    },
    errors: {},
  },
  createWebhook: {
    method: 'POST',
    path: '/webhooks',
    tag: 'webhooks',
    scope: 'webhooks:manage',
    alsoRequires: ['plants:read'],
    summary: 'Register a webhook',
    description: [
      "Registers a receiver for the token's team: from now on, every event of the types it chooses (`eventTypes`, by default `plant.created` alone) is POSTed to `url`.",
      'With `plant.created` alone it gets the NewPlant as the body (the `/plant/webhook` webhook of this document); with any other choice, every chosen type as a Standard Webhooks envelope (the `plant.created`, `plant.updated` and `plant.deleted` webhooks).',
      'Its events carry plants, so the token needs `plants:read` as well.',
      'The answer carries the signing `secret`, shown this once only: keep it to verify signatures.',
      `The URL must be an absolute http or https URL of at most ${WEBHOOK_URL_MAX_LENGTH} characters, without credentials or fragment, whose host is a public address (a name must resolve to public addresses only); private, loopback and link-local addresses are refused unless the service runs with \`WEBHOOKS_ALLOW_PRIVATE_NETWORKS=true\`.`,
      `A team may hold at most ${WEBHOOK_LIMIT} webhooks by default (the service's \`WEBHOOKS_PER_TEAM_LIMIT\`).`,
    ].join(' '),
    body: { schema: NewWebhookSchema, description: 'The receiver to register' },
    success: {
      status: 201,
      description: 'Registered: the subscription with its signing secret (shown this once only).',
      schema: CreatedWebhookSchema,
    },
    errors: {
      400: 'The body or its URL is refused: not JSON, a missing or ill-formed field, a URL that is not http(s), carries credentials or a fragment, or whose host is not a public address or does not resolve.',
      409: "The token's team holds as many webhooks as its limit: delete one first.",
    },
  },
  deleteWebhook: {
    method: 'DELETE',
    path: '/webhooks/{id}',
    tag: 'webhooks',
    scope: 'webhooks:manage',
    summary: 'Delete a webhook',
    description: 'Removes the subscription and its deliveries: nothing more is sent to it, pending retries included.',
    parameters: ['webhookId'],
    success: { status: 204, description: 'Deleted' },
    errors: { 404: NO_SUCH_WEBHOOK },
  },
  updateWebhook: {
    method: 'PATCH',
    path: '/webhooks/{id}',
    tag: 'webhooks',
    scope: 'webhooks:manage',
    alsoRequires: ['plants:read'],
    summary: 'Change a webhook',
    description: [
      'Applies a JSON merge patch (RFC 7396) of `url`, `description` (null removes it), `eventTypes` and `enabled`: a field absent is kept.',
      'A change can send its events somewhere else, or send more of them, and its events carry plants: the token needs `plants:read` as well, as at registration.',
      '`{"enabled": false}` disables it: it gets no new events (it catches up from `GET /events`), and its pending deliveries wait; `{"enabled": true}` enables it again, and they go out.',
      'The service disables a subscription by itself when every attempt to it has failed for its `WEBHOOKS_DISABLE_AFTER_DAYS` (5 by default), saying so in `disabledReason`.',
      'A new `url` is judged as at registration. Changes are recorded in the audit log.',
    ].join(' '),
    parameters: ['webhookId'],
    body: {
      schema: WebhookPatchSchema,
      description: 'A JSON merge patch of the subscription',
      mediaTypes: ['application/merge-patch+json', 'application/json'],
    },
    success: { status: 200, description: 'The subscription as it is now.', schema: WebhookSchema },
    errors: {
      400: 'The body is refused: a field ill-formed or null where it may not be, an unknown or repeated event type, or a URL that is not allowed (as at registration).',
      404: NO_SUCH_WEBHOOK,
    },
  },
  rotateWebhookSecret: {
    method: 'POST',
    path: '/webhooks/{id}/secret',
    tag: 'webhooks',
    scope: 'webhooks:manage',
    summary: "Rotate a webhook's secret",
    description: [
      'Gives the subscription a new signing secret, answered this once only.',
      `For a grace period (\`gracePeriodSeconds\`, ${SECRET_GRACE_PERIOD_DEFAULT_SECONDS} s by default; 0: none) every delivery carries two \`v1,\` signatures, space-separated: one with the new secret and one with the previous, so receivers verifying with either accept it; afterwards only the new one.`,
      'A rotation during a grace period ends the older secret at once: at most two secrets sign. Recorded in the audit log.',
    ].join(' '),
    parameters: ['webhookId'],
    body: {
      schema: RotateWebhookSecretSchema,
      description: 'The grace period (optional: without a body, 24 h)',
      optional: true,
    },
    success: {
      status: 200,
      description: 'The new secret (shown this once only), and until when the previous one signs too.',
      schema: RotatedWebhookSecretSchema,
    },
    errors: { 400: 'The body is refused: `gracePeriodSeconds` out of range.', 404: NO_SUCH_WEBHOOK },
  },
  testWebhook: {
    method: 'POST',
    path: '/webhooks/{id}/test',
    tag: 'webhooks',
    scope: 'webhooks:manage',
    summary: 'Send a test event',
    description: [
      'Sends the subscription a `webhook.test` event, a Standard Webhooks envelope (the `webhook.test` webhook of this document), whatever the types it chose, signed and retried as any other event.',
      'It shows in the delivery log (`eventType` `webhook.test`, `plantId` 0: it is about no plant). A disabled subscription gets it once enabled. The body, if any, is ignored. Recorded in the audit log.',
    ].join(' '),
    parameters: ['webhookId'],
    success: { status: 202, description: 'Queued: the delivery, pending, due now.', schema: WebhookDeliverySchema },
    errors: { 404: NO_SUCH_WEBHOOK },
  },
  listWebhookDeliveries: {
    method: 'GET',
    path: '/webhooks/{id}/deliveries',
    tag: 'webhooks',
    scope: 'webhooks:manage',
    summary: "List a webhook's deliveries",
    description: [
      'Every event sent (or to be sent) to this webhook, in ascending id order (oldest first), one page at a time, each with every attempt so far.',
      'Paged like `GET /plants`: when more deliveries follow, the `Link` header carries the next page (`rel="next"`); or pass the last `id` of a page as `after`.',
      "With `status`, only the deliveries that have it (the next page keeps the filter). Each attempt carries the start of the receiver's answer as `responseExcerpt`.",
    ].join(' '),
    parameters: ['webhookId', 'deliveriesLimit', 'deliveriesAfter', 'deliveriesStatus'],
    query: ListDeliveriesQuerySchema,
    success: {
      status: 200,
      description: 'The page of deliveries, in ascending id order (empty when none).',
      schema: WebhookDeliveryListSchema,
      paged: true,
    },
    errors: { 400: PAGE_QUERY_REFUSED, 404: NO_SUCH_WEBHOOK },
  },
  resendWebhookDelivery: {
    method: 'POST',
    path: '/webhooks/{id}/deliveries/{deliveryId}/resend',
    tag: 'webhooks',
    scope: 'webhooks:manage',
    summary: 'Resend a delivery',
    description: [
      'Queues the delivery to be attempted again now, whatever its status: a delivered one is sent once more; a failed one gets that one attempt (and is failed again if it fails too); a pending one goes on with its retry schedule.',
      'Attempts already made are kept, and count towards the schedule. The body, if any, is ignored.',
    ].join(' '),
    parameters: ['webhookId', 'deliveryId'],
    success: { status: 202, description: 'Queued: the delivery, pending, due now.', schema: WebhookDeliverySchema },
    errors: {
      400: 'The path deliveryId is not an int64.',
      404: 'This webhook has no delivery with this id (or there is no such webhook).',
    },
  },
  resendWebhookDeliveries: {
    method: 'POST',
    path: '/webhooks/{id}/deliveries/resend',
    tag: 'webhooks',
    scope: 'webhooks:manage',
    summary: 'Resend many deliveries',
    description: [
      `Queues again, oldest first, up to \`limit\` (at most ${RESEND_DELIVERIES_MAX}) of this webhook's deliveries that have \`status\` (default \`failed\`) and fall in the range given (ids after \`after\` and up to \`through\`, created from \`createdFrom\` and before \`createdBefore\`), each as \`POST .../deliveries/{deliveryId}/resend\` does, in one transaction, each recorded in the audit log.`,
      '`hasMore` says whether more matched: send again with `after` the last id resent to go on. An empty body `{}` resends the oldest failed deliveries.',
    ].join(' '),
    parameters: ['webhookId'],
    body: { schema: ResendDeliveriesSchema, description: 'Which deliveries to queue again' },
    success: {
      status: 202,
      description: 'Queued: how many, and their ids (none when nothing matched).',
      schema: ResentDeliveriesSchema,
    },
    errors: {
      400: 'The body is refused: not a JSON object, an unknown status, an ill-formed id, instant or limit.',
      404: NO_SUCH_WEBHOOK,
    },
  },
  listTokens: {
    method: 'GET',
    path: '/tokens',
    tag: 'tokens',
    scope: 'tokens:manage',
    summary: 'List tokens',
    description: [
      "Every token of the token's team that is not revoked (every team's with `platform:admin`), oldest first: expired ones too, until they are revoked. Never the tokens themselves.",
      '`lastUsedAt` is written in batches, about once a minute by each replica: it may be up to a minute behind.',
    ].join(' '),
    success: { status: 200, description: 'The tokens, oldest first.', schema: TokenListSchema },
    errors: {},
  },
  createToken: {
    method: 'POST',
    path: '/tokens',
    tag: 'tokens',
    scope: 'tokens:manage',
    summary: 'Issue a token',
    description: [
      "Issues a bearer token for the token's team (or with `platform:admin`, for the `team` named) with the given scopes, optionally expiring at `expiresAt` and with a rate limit of its own.",
      "A token grants only scopes it holds itself, and a team grants no longer a lifetime and no larger a rate limit than the platform allows (the service's `TOKEN_MAX_LIFETIME_DAYS` and `TOKEN_MAX_RATE_LIMIT`; a token without `expiresAt` counts as living for ever, and one without a rate limit as having the default one); beyond them the answer is 403 naming the rule.",
      'The answer carries the token itself as `token`, shown this once only: the service keeps only its hash.',
      `A rate limit is at most ${TOKEN_RATE_LIMIT_MAX_REQUESTS} requests per window of 1 to ${TOKEN_RATE_LIMIT_MAX_SECONDS} seconds; without one the service's default applies.`,
      'Names are never reused, and are unique ignoring case: a revoked token keeps its name.',
    ].join(' '),
    body: { schema: NewTokenSchema, description: 'The token to issue' },
    forbiddenWhen:
      'or asks for what it may not grant: a scope it does not hold itself, another team (without `platform:admin`), or a lifetime or rate limit beyond the platform policy',
    success: {
      status: 201,
      description: "Issued: the token's record and the token itself (shown this once only).",
      schema: CreatedTokenSchema,
    },
    errors: {
      400: 'The body is refused: a missing or ill-formed field, an unknown or repeated scope, an `expiresAt` that is not in the future, or a rate limit out of range.',
      409: 'A token with this name, in any case, exists or existed (revoked names are not reused); or the team holds as many active tokens as its limit.',
    },
  },
  revokeToken: {
    method: 'DELETE',
    path: '/tokens/{name}',
    tag: 'tokens',
    scope: 'tokens:manage',
    summary: 'Revoke a token',
    description:
      "Revokes the token (of the token's team; any team's with `platform:admin`): it stops authenticating at once on the replica that answers, and within 5 seconds on every other (they reload the active tokens every 5 s). Its name stays taken.",
    parameters: ['tokenName'],
    success: { status: 204, description: 'Revoked' },
    errors: {
      404: "No active token of the token's team has this name (it was never issued, is revoked already, or is another team's).",
    },
  },
  listAuditEvents: {
    method: 'GET',
    path: '/audit-events',
    tag: 'audit',
    scope: 'tokens:manage',
    summary: 'List audit events',
    description: [
      "The token's team's audit log (every team's with `platform:admin`), in the order the events were written, one page at a time: every token issued and revoked, subscription created, changed, disabled or enabled by hand, tested, given a new secret and deleted, delivery resent, plant changed and deleted, and import of plants, with who did it (a token's name and team, or the command line and its OS user), when and from which address.",
      "Each event is written in the same transaction as its action. Events are kept for the service's `AUDIT_RETENTION_DAYS` (365 by default).",
      'Paged like `GET /plants`: when more events follow, the `Link` header carries the next page (`rel="next"`); or pass the last `id` of a page as `after`.',
    ].join(' '),
    parameters: ['auditLimit', 'auditAfter'],
    query: ListAuditEventsQuerySchema,
    success: {
      status: 200,
      description: 'The page of events, in ascending id order (empty when none).',
      schema: AuditEventListSchema,
      paged: true,
    },
    errors: { 400: PAGE_QUERY_REFUSED },
  },
} as const satisfies Record<string, OperationDeclaration>;

export type Operations = typeof operations;
export type OperationId = keyof Operations;
