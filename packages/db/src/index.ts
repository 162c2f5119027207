export {
  type AuditActor,
  type AuditEventPage,
  type AuditEventRecord,
  commandLineActor,
} from './audit/audit-records.js';
export type { ListAuditEventsQuery } from './audit/list-audit-events.js';
export {
  BULK_APPLICATION_NAME,
  type CreatePlantContext,
  type Database,
  type DatabaseEngine,
  type DatabaseOptions,
  DEFAULT_DATA_DIR,
  migrateDatabase,
  openDatabase,
} from './database.js';
export {
  DatabaseUnavailableError,
  DataDirLockedError,
  ImportRejectedError,
  type ImportRule,
  MigrationsPendingError,
  PlantConflictError,
  TokenLimitError,
  TokenNameTakenError,
  TokenNotFoundError,
  WebhookLimitError,
} from './errors.js';
export {
  type EventPage,
  FEED_EVENT_TYPES,
  type FeedCursor,
  type FeedEventType,
  formatCursor,
  type ListEventsQuery,
  parseCursor,
} from './events/list-events.js';
export { applyMigrations, type MigrationResult, type MigrationTarget, pendingMigrations } from './migrate.js';
export type {
  DatabaseCall,
  DatabaseOperation,
  ObserveDatabaseCall,
  TraceDatabaseCalls,
} from './observe.js';
export type { CreatePlantResult } from './plants/create-plant.js';
export type { DeletePlantOptions, DeletePlantResult } from './plants/delete-plant.js';
export type { ExportOptions, PlantExport } from './plants/export-plants.js';
export type { ImportLine, ImportOptions, ImportResult } from './plants/import-plants.js';
export type { PlantPage } from './plants/list-plants.js';
export type { VersionedPlant } from './plants/plant-record.js';
export type { UpdatePlantResult } from './plants/plant-updater.js';
export type { PlantPatch, PlantUpdate } from './plants/update-plants.js';
export {
  describeHost,
  InvalidDatabaseUrlError,
  type PostgresConnectionSettings,
  type PostgresHost,
  parsePostgresUrl,
  type TargetSessionAttrs,
} from './postgres/connection-url.js';
export type { ConnectionEvent, RefusalReason } from './postgres/postgres-pool.js';
export type { IssuedToken, IssueTokenOptions } from './tokens/issue-token.js';
export type { ListTokensOptions, RevokeTokenOptions } from './tokens/manage-tokens.js';
export type { AuthenticatedToken, TokenRateLimit, TokenRecord } from './tokens/token-record.js';
export { TOKEN_PREFIX } from './tokens/token-secret.js';
export type { RotatedSecret, WebhookChangeScope, WebhookPatchInput } from './webhooks/change-webhook.js';
export type { ClaimOptions } from './webhooks/claim-deliveries.js';
export { type NewWebhookInput, WEBHOOK_LIMIT } from './webhooks/create-webhook.js';
export type { FanOutOptions, FanOutResult } from './webhooks/fan-out-events.js';
export type { TeamScope } from './webhooks/manage-webhooks.js';
export { receiverOrigin } from './webhooks/receiver-origin.js';
export type { ResendDeliveriesInput, ResentDeliveries } from './webhooks/resend-deliveries.js';
export type { RetentionOptions, RetentionResult } from './webhooks/retention.js';
export type {
  AttemptOutcome,
  ClaimedDelivery,
  CreatedWebhook,
  DeliveryAttemptRecord,
  DeliveryPage,
  DeliveryRecord,
  DeliveryStatus,
  WebhookRecord,
} from './webhooks/webhook-records.js';
