import type * as v from 'valibot';
import { AUDIT_EVENTS_PAGE_DEFAULT_LIMIT, AUDIT_EVENTS_PAGE_MAX_LIMIT, ListAuditEventsQuerySchema } from '../audit.js';
import { EVENTS_PAGE_DEFAULT_LIMIT, EVENTS_PAGE_MAX_LIMIT, ListEventsQuerySchema } from '../events.js';
import { ListPlantsQuerySchema, PLANTS_PAGE_DEFAULT_LIMIT, PLANTS_PAGE_MAX_LIMIT } from '../list.js';
import { PlantIdSchema } from '../plant.js';
import { TokenNameSchema } from '../token.js';
import {
  DELIVERIES_PAGE_DEFAULT_LIMIT,
  DELIVERIES_PAGE_MAX_LIMIT,
  DeliveryIdSchema,
  ListDeliveriesQuerySchema,
  WebhookIdSchema,
} from '../webhook.js';

/** A path or query parameter, declared once and used by name in the operations. */
export interface ParameterDeclaration {
  readonly in: 'path' | 'query';
  /** Its name in the path template (`{id}`) or the query string. */
  readonly name: string;
  readonly description: string;
  /** A query parameter's schema is its entry in the operation's query schema. */
  readonly schema: v.GenericSchema;
  /**
   * For an opaque path id, which clients only ever send back as the service gave it: one that
   * the schema refuses names nothing, so it answers 404 with this message rather than a 400.
   */
  readonly malformedMessage?: string;
}

function limitDescription(defaultLimit: number, maxLimit: number): string {
  return `The maximum number of results to return: 1 to ${maxLimit}, default ${defaultLimit}.`;
}

function afterDescription(noun: string): string {
  return `Only ${noun} whose id is greater than this one: pass the last id of the previous page.`;
}

/** Every parameter of the operations, by the name the operations (and the OpenAPI components) use. */
export const operationParameters = {
  limit: {
    in: 'query',
    name: 'limit',
    description: limitDescription(PLANTS_PAGE_DEFAULT_LIMIT, PLANTS_PAGE_MAX_LIMIT),
    schema: ListPlantsQuerySchema.entries.limit,
  },
  tag: {
    in: 'query',
    name: 'tag',
    description: 'Only plants whose tag is exactly this text.',
    schema: ListPlantsQuerySchema.entries.tag,
  },
  after: {
    in: 'query',
    name: 'after',
    description: afterDescription('plants'),
    schema: ListPlantsQuerySchema.entries.after,
  },
  id: { in: 'path', name: 'id', description: 'ID of the plant', schema: PlantIdSchema },
  webhookId: {
    in: 'path',
    name: 'id',
    description: 'ID of the webhook (a UUID)',
    schema: WebhookIdSchema,
    malformedMessage: 'no webhook has this id (webhook ids are UUIDs)',
  },
  deliveryId: { in: 'path', name: 'deliveryId', description: 'ID of the delivery', schema: DeliveryIdSchema },
  deliveriesLimit: {
    in: 'query',
    name: 'limit',
    description: limitDescription(DELIVERIES_PAGE_DEFAULT_LIMIT, DELIVERIES_PAGE_MAX_LIMIT),
    schema: ListDeliveriesQuerySchema.entries.limit,
  },
  tokenName: {
    in: 'path',
    name: 'name',
    description: 'The name of the token',
    schema: TokenNameSchema,
    malformedMessage: 'no token has this name (token names are 1-100 letters, digits, ".", "_" or "-")',
  },
  deliveriesAfter: {
    in: 'query',
    name: 'after',
    description: afterDescription('deliveries'),
    schema: ListDeliveriesQuerySchema.entries.after,
  },
  deliveriesStatus: {
    in: 'query',
    name: 'status',
    description: 'Only deliveries with this status: pending, delivered or failed.',
    schema: ListDeliveriesQuerySchema.entries.status,
  },
  auditLimit: {
    in: 'query',
    name: 'limit',
    description: limitDescription(AUDIT_EVENTS_PAGE_DEFAULT_LIMIT, AUDIT_EVENTS_PAGE_MAX_LIMIT),
    schema: ListAuditEventsQuerySchema.entries.limit,
  },
  eventsLimit: {
    in: 'query',
    name: 'limit',
    description: limitDescription(EVENTS_PAGE_DEFAULT_LIMIT, EVENTS_PAGE_MAX_LIMIT),
    schema: ListEventsQuerySchema.entries.limit,
  },
  eventsAfter: {
    in: 'query',
    name: 'after',
    description:
      "Only events after this cursor: the `cursor` of the previous page's last event, or of `GET /events/cursor`.",
    schema: ListEventsQuerySchema.entries.after,
  },
  eventType: {
    in: 'query',
    name: 'type',
    description: 'Only events of this type.',
    schema: ListEventsQuerySchema.entries.type,
  },
  auditAfter: {
    in: 'query',
    name: 'after',
    description: afterDescription('events'),
    schema: ListAuditEventsQuerySchema.entries.after,
  },
} as const satisfies Record<string, ParameterDeclaration>;

export type ParameterName = keyof typeof operationParameters;
