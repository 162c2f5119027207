import * as v from 'valibot';
import { int64Schema } from './int64.js';
import { pageLimitSchema } from './list.js';
import { objectMessage } from './text.js';
import { timestampSchema } from './timestamp.js';
import { TeamNameSchema } from './token.js';

/** How many events one `GET /audit-events` page holds when the caller does not say. */
export const AUDIT_EVENTS_PAGE_DEFAULT_LIMIT = 50;
/** The most events one page may hold. */
export const AUDIT_EVENTS_PAGE_MAX_LIMIT = 200;

/**
 * What an audit event says was done. A client reads `action` as any string (a later version of
 * the service may record more kinds); these are the ones this version writes.
 */
export const AUDIT_ACTIONS = [
  'token.issued',
  'token.revoked',
  'webhook.created',
  'webhook.deleted',
  'webhook.delivery_resent',
  'webhook.updated',
  'webhook.enabled',
  'webhook.disabled',
  'webhook.secret_rotated',
  'webhook.tested',
  'plant.updated',
  'plant.deleted',
  'plants.imported',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who acted: a bearer token (its name and team), or the command line (its OS user, no team). */
export const AuditActorSchema = v.object(
  {
    kind: v.pipe(
      v.picklist(['token', 'cli'], 'actor.kind must be token or cli'),
      v.description('token: a bearer token over HTTP; cli: the command line (the platform operator)'),
    ),
    name: v.pipe(v.string('actor.name must be a string'), v.description("The token's name, or the OS user")),
    team: v.exactOptional(v.pipe(TeamNameSchema, v.description("The token's team; absent for the command line"))),
  },
  objectMessage,
);
export type AuditActor = v.InferOutput<typeof AuditActorSchema>;

/** One event of the audit log: who did what, to what, when, from where. */
export const AuditEventSchema = v.object(
  {
    id: int64Schema('id', 'The id of the event: ascending in the order events were written'),
    occurredAt: timestampSchema('occurredAt', 'When it happened (RFC 3339)'),
    team: v.pipe(
      TeamNameSchema,
      v.description("The team whose log shows it: the owner of what was acted on; for a plant, the actor's team"),
    ),
    actor: AuditActorSchema,
    action: v.pipe(
      v.string('action must be a string'),
      v.description(`What was done: ${AUDIT_ACTIONS.join(', ')} (read any other value as a kind added later)`),
    ),
    target: v.pipe(
      v.string('target must be a string'),
      v.description('What it was done to: a token name, a webhook id, a delivery id or a plant id'),
    ),
    clientAddress: v.exactOptional(
      v.pipe(v.string('clientAddress must be a string'), v.description("The client's address, over HTTP")),
    ),
    details: v.exactOptional(
      v.pipe(
        v.record(v.string(), v.unknown(), 'details must be an object'),
        v.description('What else is worth knowing: the scopes granted, the URL subscribed'),
      ),
    ),
  },
  objectMessage,
);
export type AuditEvent = v.InferOutput<typeof AuditEventSchema>;

/** The body of a `GET /audit-events` answer: events in ascending id order. */
export const AuditEventListSchema = v.array(AuditEventSchema);
export type AuditEventList = v.InferOutput<typeof AuditEventListSchema>;

/** The query of `GET /audit-events`: `limit` (1-200, default 50) and `after` (an event id). */
export const ListAuditEventsQuerySchema = v.object({
  limit: pageLimitSchema(AUDIT_EVENTS_PAGE_DEFAULT_LIMIT, AUDIT_EVENTS_PAGE_MAX_LIMIT),
  after: v.exactOptional(
    int64Schema('after', 'Only events whose id is greater than this one: the last id of the previous page'),
  ),
});
export type ListAuditEventsQuery = v.InferOutput<typeof ListAuditEventsQuerySchema>;
export type ListAuditEventsQueryInput = v.InferInput<typeof ListAuditEventsQuerySchema>;
