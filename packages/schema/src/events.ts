import * as v from 'valibot';
import { int64Schema } from './int64.js';
import { pageLimitSchema } from './list.js';
import { NAME_MAX_LENGTH, TAG_MAX_LENGTH, tagSchema } from './plant.js';
import { objectMessage, textSchema } from './text.js';
import { timestampSchema } from './timestamp.js';

/** How many events one `GET /events` page holds when the caller does not say. */
export const EVENTS_PAGE_DEFAULT_LIMIT = 100;
/** The most events one page may hold: a mirror catches up a thousand changes a request. */
export const EVENTS_PAGE_MAX_LIMIT = 1000;

/** What can happen to a plant: the types of the feed's events and of webhook envelopes. */
export const PLANT_EVENT_TYPES = ['plant.created', 'plant.updated', 'plant.deleted'] as const;
export type PlantEventType = (typeof PLANT_EVENT_TYPES)[number];

/** Every event type a subscription may choose (the test event comes whatever it chose). */
export const WEBHOOK_EVENT_TYPES = PLANT_EVENT_TYPES;

const CURSOR_PATTERN = '^[0-9]{1,20}\\.[0-9]{1,19}$';
const CURSOR = /^[0-9]{1,20}\.[0-9]{1,19}$/;
const CURSOR_MESSAGE = 'after must be a cursor the feed gave (digits, a dot, digits)';

/** A place in the feed: opaque to callers (send back what the feed gave). */
export const EventCursorSchema = v.pipe(
  v.string(CURSOR_MESSAGE),
  v.description('A place in the feed, as the feed gave it: opaque, send it back as it is'),
  v.metadata({ pattern: CURSOR_PATTERN }),
  v.check((text) => CURSOR.test(text), CURSOR_MESSAGE),
);

/**
 * Orders two cursors the feed gave as the feed does (negative: `a` first). Cursors are opaque to
 * send back; a consumer that keeps several (one per page read) compares them with this.
 */
export function compareEventCursors(a: string, b: string): number {
  const [aTransaction = 0n, aSequence = 0n] = a.split('.').map(BigInt);
  const [bTransaction = 0n, bSequence = 0n] = b.split('.').map(BigInt);
  if (aTransaction !== bTransaction) return aTransaction < bTransaction ? -1 : 1;
  return aSequence === bSequence ? 0 : aSequence < bSequence ? -1 : 1;
}

/** A plant with its version: an event's `data`. */
export const VersionedPlantSchema = v.object(
  {
    id: int64Schema('id', 'The id of the plant'),
    name: textSchema('name', 1, NAME_MAX_LENGTH, 'Its name after the change (as it was, for a delete)'),
    tag: v.exactOptional(tagSchema(`Its tag (at most ${TAG_MAX_LENGTH} characters), absent when it has none`)),
    version: int64Schema(
      'version',
      "Its version after the change, the ETag it has from then on; for a delete, the deletion's own version, above every one the plant had. Versions only grow for an id (across a delete and a re-create too): apply an event only when its version is above the one you hold for the id (keep the version of a deleted one), and drop it otherwise, as stale",
    ),
  },
  objectMessage,
);
export type VersionedPlant = v.InferOutput<typeof VersionedPlantSchema>;

const EVENT_ID_MESSAGE = 'eventId must be msg_ followed by a UUID';
const EVENT_ID = /^msg_[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$/;

/**
 * One event of the feed (`GET /events`): the Standard Webhooks envelope a subscription receives
 * (`type`, `timestamp`, `data`), with its place in the feed and its id (the webhook-id header of
 * its deliveries). `type` is read as any string: a later version may add kinds.
 */
export const EventSchema = v.object(
  {
    cursor: EventCursorSchema,
    eventId: v.pipe(
      v.string(EVENT_ID_MESSAGE),
      v.description('The event: the webhook-id header of its deliveries'),
      v.metadata({ pattern: EVENT_ID.source }),
      v.check((text) => EVENT_ID.test(text), EVENT_ID_MESSAGE),
    ),
    type: v.pipe(v.string('type must be a string'), v.description(`What happened: ${PLANT_EVENT_TYPES.join(', ')}`)),
    timestamp: timestampSchema('timestamp', 'When it happened (RFC 3339)'),
    data: v.pipe(VersionedPlantSchema, v.description('The plant after the change (as it was, for a delete)')),
  },
  objectMessage,
);
export type Event = v.InferOutput<typeof EventSchema>;

/** The body of a `GET /events` answer: events in the feed's order. */
export const EventListSchema = v.array(EventSchema);
export type EventList = v.InferOutput<typeof EventListSchema>;

/** The query of `GET /events`: `limit` (1-1000, default 100), `after` (a cursor), `type`. */
export const ListEventsQuerySchema = v.object({
  limit: pageLimitSchema(EVENTS_PAGE_DEFAULT_LIMIT, EVENTS_PAGE_MAX_LIMIT),
  after: v.exactOptional(EventCursorSchema),
  type: v.exactOptional(
    v.pipe(
      v.picklist(PLANT_EVENT_TYPES, `type must be one of ${PLANT_EVENT_TYPES.join(', ')}`),
      v.description('Only events of this type'),
    ),
  ),
});
export type ListEventsQuery = v.InferOutput<typeof ListEventsQuerySchema>;
export type ListEventsQueryInput = v.InferInput<typeof ListEventsQuerySchema>;

/** The answer of `GET /events/cursor`: where the feed stands now. */
export const EventFeedPositionSchema = v.object(
  {
    cursor: v.pipe(
      EventCursorSchema,
      v.description(
        'Where the feed stands now: every event listed so far comes before it, every one that shows later after it',
      ),
    ),
  },
  objectMessage,
);
export type EventFeedPosition = v.InferOutput<typeof EventFeedPositionSchema>;

/** The body a subscription with a type other than plant.created alone receives: the Standard Webhooks envelope. */
export const PlantEventEnvelopeSchema = v.object(
  {
    type: v.pipe(v.picklist(PLANT_EVENT_TYPES, 'type must be a plant event type'), v.description('What happened')),
    timestamp: timestampSchema('timestamp', 'When it happened (RFC 3339): the same on every attempt'),
    data: v.pipe(VersionedPlantSchema, v.description('The plant after the change (as it was, for a delete)')),
  },
  objectMessage,
);
export type PlantEventEnvelope = v.InferOutput<typeof PlantEventEnvelopeSchema>;
