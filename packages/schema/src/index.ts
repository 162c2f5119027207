export {
  BODY_ERROR_CODES,
  type BodyOf,
  CLIENT_FAULT_CODES,
  COMMON_ERROR_CODES,
  type HttpMethod,
  OPERATION_TAGS,
  type OperationDeclaration,
  type OperationInput,
  type PathParametersOf,
  type QueryOf,
  type SuccessBodyOf,
  type SuccessStatus,
} from './contract/operation.js';
export { type OperationId, type Operations, operations } from './contract/operations.js';
export { operationParameters, type ParameterDeclaration, type ParameterName } from './contract/parameters.js';
export { isScope, SCOPE_DESCRIPTIONS, SCOPES, type Scope } from './contract/scopes.js';
export { type ErrorBody, ErrorCode, ErrorSchema } from './error.js';
export { INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, int32Schema, int64Schema, isInt64 } from './int64.js';
export { JsonTooDeepError, MAX_JSON_DEPTH, parseJson, stringifyJson } from './json.js';
export {
  type ListPlantsQuery,
  type ListPlantsQueryInput,
  ListPlantsQuerySchema,
  PLANTS_PAGE_DEFAULT_LIMIT,
  PLANTS_PAGE_MAX_LIMIT,
  type PlantList,
  PlantListSchema,
  pageLimitSchema,
} from './list.js';
export {
  NAME_MAX_LENGTH,
  type NewPlant,
  type NewPlantInput,
  NewPlantSchema,
  type Plant,
  PlantIdSchema,
  PlantSchema,
  type StoredPlant,
  StoredPlantSchema,
  TAG_MAX_LENGTH,
  tagSchema,
} from './plant.js';
export { isStorableText, STORABLE_TEXT_PATTERN } from './text.js';
export { isRfc3339DateTime, timestampSchema } from './timestamp.js';
export {
  type CreatedWebhook,
  CreatedWebhookSchema,
  DELIVERIES_PAGE_DEFAULT_LIMIT,
  DELIVERIES_PAGE_MAX_LIMIT,
  DELIVERY_STATUSES,
  DeliveryIdSchema,
  type DeliveryStatus,
  type ListDeliveriesQuery,
  type ListDeliveriesQueryInput,
  ListDeliveriesQuerySchema,
  type NewWebhook,
  NewWebhookSchema,
  type PlantCreatedEvent,
  PlantCreatedEventSchema,
  WEBHOOK_DESCRIPTION_MAX_LENGTH,
  WEBHOOK_LIMIT,
  WEBHOOK_URL_MAX_LENGTH,
  type Webhook,
  type WebhookDelivery,
  type WebhookDeliveryAttempt,
  WebhookDeliveryAttemptSchema,
  type WebhookDeliveryList,
  WebhookDeliveryListSchema,
  WebhookDeliverySchema,
  WebhookIdSchema,
  type WebhookList,
  WebhookListSchema,
  WebhookSchema,
  WebhookUrlSchema,
} from './webhook.js';
