import * as v from 'valibot';
import { int32Schema, int64Schema } from './int64.js';
import { objectMessage } from './text.js';
import { timestampSchema } from './timestamp.js';
import { DeliveryStatusSchema } from './webhook.js';

/** The most deliveries one `POST /webhooks/{id}/deliveries/resend` queues again. */
export const RESEND_DELIVERIES_MAX = 100;

/**
 * The body of `POST /webhooks/{id}/deliveries/resend`: which of the subscription's deliveries to
 * queue again, oldest first, at most `limit` (1-100, default 100) of them: those with `status`
 * (default `failed`), of ids in (`after`, `through`] and created in [`createdFrom`, `createdBefore`),
 * each bound when given. Unknown keys are stripped.
 */
export const ResendDeliveriesSchema = v.object(
  {
    status: v.optional(
      v.pipe(DeliveryStatusSchema, v.description('Only deliveries with this status; default failed')),
      'failed',
    ),
    after: v.exactOptional(int64Schema('after', 'Only deliveries whose id is greater than this one')),
    through: v.exactOptional(int64Schema('through', 'Only deliveries whose id is at most this one')),
    createdFrom: v.exactOptional(
      timestampSchema('createdFrom', 'Only deliveries created at or after this instant (RFC 3339)'),
    ),
    createdBefore: v.exactOptional(
      timestampSchema('createdBefore', 'Only deliveries created before this instant (RFC 3339)'),
    ),
    limit: v.optional(
      int32Schema(
        'limit',
        `The most deliveries to queue again: 1 to ${RESEND_DELIVERIES_MAX}, default ${RESEND_DELIVERIES_MAX}`,
        1,
        RESEND_DELIVERIES_MAX,
      ),
      RESEND_DELIVERIES_MAX,
    ),
  },
  objectMessage,
);
export type ResendDeliveries = v.InferOutput<typeof ResendDeliveriesSchema>;
/** What a caller may pass: every field optional. */
export type ResendDeliveriesInput = v.InferInput<typeof ResendDeliveriesSchema>;

/** The answer of `POST /webhooks/{id}/deliveries/resend`. */
export const ResentDeliveriesSchema = v.object(
  {
    resent: int32Schema('resent', 'How many deliveries were queued again', 0, RESEND_DELIVERIES_MAX),
    deliveryIds: v.pipe(
      v.array(int64Schema('deliveryIds[]', 'A delivery queued again'), 'deliveryIds must be an array'),
      v.description('The ids of the deliveries queued again, ascending'),
    ),
    hasMore: v.pipe(
      v.boolean('hasMore must be a boolean'),
      v.description(
        'Whether more deliveries in the range matched than `limit`: send again with `after` the last id to go on',
      ),
    ),
  },
  objectMessage,
);
export type ResentDeliveries = v.InferOutput<typeof ResentDeliveriesSchema>;
