// The contract's types, re-exported so that callers need no second import; defined once, in @plant-store/schema.
export type {
  AuditActor,
  AuditEvent,
  CreatedToken,
  CreatedWebhook,
  DeliveryStatus,
  Event,
  ExportPlantsQueryInput,
  ImportResult,
  ListAuditEventsQuery,
  ListAuditEventsQueryInput,
  ListDeliveriesQuery,
  ListDeliveriesQueryInput,
  ListEventsQuery,
  ListEventsQueryInput,
  ListPlantsQuery,
  ListPlantsQueryInput,
  NewPlantInput,
  NewTokenInput,
  NewWebhook,
  PlantCreatedEvent,
  PlantEventType,
  PlantPatchInput,
  ResendDeliveriesInput,
  ResentDeliveries,
  RotatedWebhookSecret,
  ServiceVersion,
  StoredPlant,
  Token,
  TokenRateLimit,
  Webhook,
  WebhookDelivery,
  WebhookDeliveryAttempt,
  WebhookPatchInput,
  WebhookTestEnvelope,
} from '@plant-store/schema';
export type { CallOptions } from './client-context.js';
export {
  createPlantStoreClient,
  DEFAULT_TIMEOUT_MS,
  type PlantStoreClient,
  type PlantStoreClientOptions,
} from './create-plant-store-client.js';
export type { DeletePlantOptions } from './delete-plant.js';
export type { IteratePlantsOptions } from './iterate-plants.js';
export type { IterateDeliveriesOptions } from './iterate-webhook-deliveries.js';
export type { AuditEventsPage, IterateAuditEventsOptions } from './list-audit-events.js';
export type { EventsPage, IterateEventsOptions } from './list-events.js';
export type { PlantsPage } from './list-plants.js';
export type { WebhookDeliveriesPage } from './list-webhook-deliveries.js';
export type { NextAuditEventsQuery, NextDeliveriesQuery, NextEventsQuery, NextPlantsQuery } from './next-page.js';
export {
  isPlantStoreError,
  PlantStoreError,
  type PlantStoreErrorInit,
  type PlantStoreErrorKind,
} from './plant-store-error.js';
export type { PreconditionOptions, VersionedStoredPlant } from './plant-versions.js';
export { DEFAULT_RETRY_POLICY, type RetryOptions, type RetryPolicy } from './retry-policy.js';
export type { RotateWebhookSecretOptions } from './rotate-webhook-secret.js';
export type { ExportPlantsOptions, ImportPlantsOptions, ImportSource } from './transfer-plants.js';
export type { UpdatePlantOptions } from './update-plant.js';
