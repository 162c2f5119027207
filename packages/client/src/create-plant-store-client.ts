import type {
  AuditEvent,
  CreatedToken,
  CreatedWebhook,
  Event,
  ExportPlantsQueryInput,
  ImportResult,
  ListAuditEventsQueryInput,
  ListDeliveriesQueryInput,
  ListEventsQueryInput,
  ListPlantsQueryInput,
  NewPlantInput,
  NewTokenInput,
  NewWebhook,
  PlantPatchInput,
  ResendDeliveriesInput,
  ResentDeliveries,
  RotatedWebhookSecret,
  ServiceVersion,
  StoredPlant,
  Token,
  Webhook,
  WebhookDelivery,
  WebhookPatchInput,
} from '@plant-store/schema';
import type { CallOptions, ClientContext } from './client-context.js';
import { createPlant } from './create-plant.js';
import { createToken } from './create-token.js';
import { createWebhook } from './create-webhook.js';
import { type DeletePlantOptions, deletePlant } from './delete-plant.js';
import { deleteWebhook } from './delete-webhook.js';
import { getPlant, getVersionedPlant } from './get-plant.js';
import { type IteratePlantsOptions, iteratePlants } from './iterate-plants.js';
import { type IterateDeliveriesOptions, iterateWebhookDeliveries } from './iterate-webhook-deliveries.js';
import {
  type AuditEventsPage,
  type IterateAuditEventsOptions,
  iterateAuditEvents,
  listAuditEvents,
} from './list-audit-events.js';
import {
  type EventsPage,
  getEventCursor,
  type IterateEventsOptions,
  iterateEvents,
  listEvents,
} from './list-events.js';
import { listPlants, type PlantsPage } from './list-plants.js';
import { listTokens } from './list-tokens.js';
import { listWebhookDeliveries, type WebhookDeliveriesPage } from './list-webhook-deliveries.js';
import { listWebhooks } from './list-webhooks.js';
import type { VersionedStoredPlant } from './plant-versions.js';
import { resendWebhookDeliveries } from './resend-webhook-deliveries.js';
import { resendWebhookDelivery } from './resend-webhook-delivery.js';
import { type RetryOptions, resolveRetryPolicy } from './retry-policy.js';
import { revokeToken } from './revoke-token.js';
import { type RotateWebhookSecretOptions, rotateWebhookSecret } from './rotate-webhook-secret.js';
import { sendWebhookTest } from './send-webhook-test.js';
import { checkReadiness, getServiceVersion } from './service-status.js';
import {
  type ExportPlantsOptions,
  exportPlants,
  type ImportPlantsOptions,
  type ImportSource,
  importPlants,
} from './transfer-plants.js';
import { type UpdatePlantOptions, updatePlant } from './update-plant.js';
import { updateWebhook } from './update-webhook.js';

export interface PlantStoreClientOptions {
  /** Where the service answers, e.g. `http://127.0.0.1:3000` or `https://example.com/store/` (a path prefix is kept). */
  readonly baseUrl: string | URL;
  /** A bearer token (`pst_...`), sent as `Authorization: Bearer <token>` to baseUrl only. */
  readonly token: string;
  /** The fetch to use; default the global `fetch`. */
  readonly fetch?: typeof fetch;
  /** Retries of transient failures; see the README for which calls retry on what. */
  readonly retry?: RetryOptions;
  /** How long one attempt (request and whole answer) may take; default 10000. */
  readonly timeoutMs?: number;
}

export interface PlantStoreClient {
  /** `POST /plants`: validated with NewPlantSchema before sending; returns the plant as stored. */
  createPlant(plant: NewPlantInput, options?: CallOptions): Promise<StoredPlant>;
  /** `GET /plants/{id}`: the plant; a PlantStoreError with `error` 404 when there is none. */
  getPlant(id: bigint, options?: CallOptions): Promise<StoredPlant>;
  /** `GET /plants/{id}` with the plant's version (its ETag), for a change under `ifMatch`. */
  getVersionedPlant(id: bigint, options?: CallOptions): Promise<VersionedStoredPlant>;
  /**
   * `PATCH /plants/{id}`: a merge patch of `name` and `tag` (`tag: null` removes it); the plant as
   * it is now with its version. With `ifMatch`, only while the plant has that version (else a
   * PlantStoreError with `error` 412).
   */
  updatePlant(id: bigint, patch: PlantPatchInput, options?: UpdatePlantOptions): Promise<VersionedStoredPlant>;
  /** `GET /plants`: one page, and the query of the next one (null on the last page). */
  listPlants(query?: ListPlantsQueryInput, options?: CallOptions): Promise<PlantsPage>;
  /** Every plant (or every plant with `tag`), page after page, following `Link: rel="next"`. */
  plants(options?: IteratePlantsOptions): AsyncGenerator<StoredPlant, void, undefined>;
  /**
   * `POST /plants/import`: streams plants in as NDJSON (from a file path, a Blob, a stream or an
   * iterable of bytes or of plants); all or nothing, the counts once every line is stored.
   */
  importPlants(source: ImportSource, options?: ImportPlantsOptions): Promise<ImportResult>;
  /**
   * `GET /plants/export`: every plant (or one tag's) from one snapshot, in id order, as it streams
   * in; `onCursor` gets the snapshot's event-feed cursor first.
   */
  exportPlants(
    query?: ExportPlantsQueryInput,
    options?: ExportPlantsOptions,
  ): AsyncGenerator<StoredPlant, void, undefined>;
  /**
   * `DELETE /plants/{id}`; a PlantStoreError with `error` 404 when there is none. Retried only on
   * the service's own 503/429 Error, never after a lost answer; a retry answered 404 resolves.
   */
  deletePlant(id: bigint, options?: DeletePlantOptions): Promise<void>;

  // The event feed: needs `plants:read`.

  /** `GET /events`: one page of the feed in commit order, and the query of the next one (null once caught up). */
  listEvents(query?: ListEventsQueryInput, options?: CallOptions): Promise<EventsPage>;
  /** `GET /events/cursor`: where the feed stands now. */
  getEventCursor(options?: CallOptions): Promise<string>;
  /** The feed, event after event, from `after`; with `follow`, it keeps asking for new ones until aborted. */
  events(options?: IterateEventsOptions): AsyncGenerator<Event, void, undefined>;

  // Webhooks: every call needs a token with the `webhooks:manage` scope, and reaches its team's
  // subscriptions only (every team's with `platform:admin`).

  /**
   * `POST /webhooks` (with `plants:read` too): registers a receiver for the token's team; the answer's `secret` (shown this once only) verifies
   * its signatures. Retried only on the service's own 503/429 Error: a retry after a lost answer
   * would register a second subscription.
   */
  createWebhook(webhook: NewWebhook, options?: CallOptions): Promise<CreatedWebhook>;
  /** `GET /webhooks`: every subscription, oldest first, never with its secret. */
  listWebhooks(options?: CallOptions): Promise<Webhook[]>;
  /** `DELETE /webhooks/{id}`, and its deliveries; a PlantStoreError with `error` 404 when there is none. Retried as deletePlant. */
  deleteWebhook(id: string, options?: CallOptions): Promise<void>;
  /** `GET /webhooks/{id}/deliveries`: one page, and the query of the next one (null on the last page). */
  listWebhookDeliveries(
    webhookId: string,
    query?: ListDeliveriesQueryInput,
    options?: CallOptions,
  ): Promise<WebhookDeliveriesPage>;
  /** Every delivery of a webhook, page after page, following `Link: rel="next"`. */
  webhookDeliveries(
    webhookId: string,
    options?: IterateDeliveriesOptions,
  ): AsyncGenerator<WebhookDelivery, void, undefined>;
  /** `POST /webhooks/{id}/deliveries/{deliveryId}/resend`: the delivery, queued to be attempted again now. */
  resendWebhookDelivery(webhookId: string, deliveryId: bigint, options?: CallOptions): Promise<WebhookDelivery>;
  /**
   * `PATCH /webhooks/{id}`: a merge patch of `url`, `description` (null removes it), `eventTypes`
   * and `enabled`; the subscription as it is now.
   */
  updateWebhook(id: string, patch: WebhookPatchInput, options?: CallOptions): Promise<Webhook>;
  /**
   * `POST /webhooks/{id}/secret`: a new signing secret (shown this once only); the previous one
   * signs too for `gracePeriodSeconds` (default 24 h, 0: none). Not retried after a lost answer.
   */
  rotateWebhookSecret(id: string, options?: RotateWebhookSecretOptions): Promise<RotatedWebhookSecret>;
  /** `POST /webhooks/{id}/test`: queues a `webhook.test` event; its delivery (pending). */
  sendWebhookTest(id: string, options?: CallOptions): Promise<WebhookDelivery>;
  /**
   * `POST /webhooks/{id}/deliveries/resend`: queues again, oldest first, up to 100 of the webhook's
   * deliveries with a status (default `failed`) in an id or time range; `hasMore` says whether more matched.
   */
  resendWebhookDeliveries(
    webhookId: string,
    input?: ResendDeliveriesInput,
    options?: CallOptions,
  ): Promise<ResentDeliveries>;

  // Tokens: every call needs a token with the `tokens:manage` scope, and reaches its team's tokens
  // only (every team's with `platform:admin`).

  /**
   * `POST /tokens`: issues a token; the answer's `token` (shown this once only) is the bearer
   * token. Retried only on the service's own 503/429 Error: after a lost answer a retry would
   * find the name taken (409) and the token lost.
   */
  createToken(token: NewTokenInput, options?: CallOptions): Promise<CreatedToken>;
  /** `GET /tokens`: every active token (expired ones too), oldest first, never a token itself. */
  listTokens(options?: CallOptions): Promise<Token[]>;
  /** `DELETE /tokens/{name}`: revokes it; a PlantStoreError with `error` 404 when no active token has the name. Retried as deletePlant. */
  revokeToken(name: string, options?: CallOptions): Promise<void>;

  // The audit log: needs `tokens:manage`; the team's own (every team's with `platform:admin`).

  /** `GET /audit-events`: one page, and the query of the next one (null on the last page). */
  listAuditEvents(query?: ListAuditEventsQueryInput, options?: CallOptions): Promise<AuditEventsPage>;
  /** Every event the token may read, oldest first, page after page, following `Link: rel="next"`. */
  auditEvents(options?: IterateAuditEventsOptions): AsyncGenerator<AuditEvent, void, undefined>;

  // The service itself: no scope needed.

  /** `GET /version`: which release of the service answers. */
  getServiceVersion(options?: CallOptions): Promise<ServiceVersion>;
  /** `GET /readyz`: resolves when the service is ready; a PlantStoreError with `error` 503 when not. */
  checkReadiness(options?: CallOptions): Promise<void>;
}

export const DEFAULT_TIMEOUT_MS = 10_000;

/** token68 (RFC 9110): what a bearer credential may contain. */
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** A client for the Plant Store service. Options that make no sense throw a TypeError or RangeError at once. */
export function createPlantStoreClient(options: PlantStoreClientOptions): PlantStoreClient {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new RangeError(`timeoutMs must be a positive number, not ${timeoutMs}`);
  }
  // Never echo the token: it is a secret.
  if (typeof options.token !== 'string' || !BEARER_TOKEN.test(options.token)) {
    throw new TypeError('token must be a bearer token (pst_...)');
  }
  const context: ClientContext = {
    baseUrl: resolveBaseUrl(options.baseUrl),
    transport: {
      // Looked up per call and called unbound: some fetch implementations refuse another `this`.
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
      token: options.token,
      timeoutMs,
      retry: resolveRetryPolicy(options.retry),
    },
  };
  return {
    createPlant: (plant, callOptions) => createPlant(context, plant, callOptions),
    getPlant: (id, callOptions) => getPlant(context, id, callOptions),
    getVersionedPlant: (id, callOptions) => getVersionedPlant(context, id, callOptions),
    updatePlant: (id, patch, updateOptions) => updatePlant(context, id, patch, updateOptions),
    listPlants: (query, callOptions) => listPlants(context, query, callOptions),
    plants: (iterateOptions) => iteratePlants(context, iterateOptions),
    importPlants: (source, importOptions) => importPlants(context, source, importOptions),
    exportPlants: (query, exportOptions) => exportPlants(context, query, exportOptions),
    deletePlant: (id, deleteOptions) => deletePlant(context, id, deleteOptions),
    listEvents: (query, callOptions) => listEvents(context, query, callOptions),
    getEventCursor: (callOptions) => getEventCursor(context, callOptions),
    events: (iterateOptions) => iterateEvents(context, iterateOptions),
    createWebhook: (webhook, callOptions) => createWebhook(context, webhook, callOptions),
    listWebhooks: (callOptions) => listWebhooks(context, callOptions),
    deleteWebhook: (id, callOptions) => deleteWebhook(context, id, callOptions),
    listWebhookDeliveries: (webhookId, query, callOptions) =>
      listWebhookDeliveries(context, webhookId, query, callOptions),
    webhookDeliveries: (webhookId, iterateOptions) => iterateWebhookDeliveries(context, webhookId, iterateOptions),
    resendWebhookDelivery: (webhookId, deliveryId, callOptions) =>
      resendWebhookDelivery(context, webhookId, deliveryId, callOptions),
    updateWebhook: (id, patch, callOptions) => updateWebhook(context, id, patch, callOptions),
    rotateWebhookSecret: (id, rotateOptions) => rotateWebhookSecret(context, id, rotateOptions),
    sendWebhookTest: (id, callOptions) => sendWebhookTest(context, id, callOptions),
    resendWebhookDeliveries: (webhookId, input, callOptions) =>
      resendWebhookDeliveries(context, webhookId, input, callOptions),
    createToken: (token, callOptions) => createToken(context, token, callOptions),
    listTokens: (callOptions) => listTokens(context, callOptions),
    revokeToken: (name, callOptions) => revokeToken(context, name, callOptions),
    listAuditEvents: (query, callOptions) => listAuditEvents(context, query, callOptions),
    auditEvents: (iterateOptions) => iterateAuditEvents(context, iterateOptions),
    getServiceVersion: (callOptions) => getServiceVersion(context, callOptions),
    checkReadiness: (callOptions) => checkReadiness(context, callOptions),
  };
}

/** The base URL with a trailing `/`, so that `plants` resolves below its path prefix. */
function resolveBaseUrl(baseUrl: string | URL): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError(`baseUrl must be an absolute http or https URL, not ${String(baseUrl)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`baseUrl must be an http or https URL, not ${url.protocol}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new TypeError('baseUrl must not carry credentials: the client authenticates with token');
  }
  if (url.search !== '' || url.hash !== '') {
    throw new TypeError(`baseUrl must not have a query or fragment: ${url.href}`);
  }
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}
