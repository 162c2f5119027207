import * as v from 'valibot';
import { int32Schema } from './int64.js';
import { objectMessage, textSchema } from './text.js';
import { timestampSchema } from './timestamp.js';
import { EventTypesSchema, WEBHOOK_DESCRIPTION_MAX_LENGTH, WebhookIdSchema, WebhookUrlSchema } from './webhook.js';

/**
 * What a subscription's owner changes after creating it: `PATCH /webhooks/{id}`, rotating its
 * secret, sending it a test event.
 */

/**
 * The body of `PATCH /webhooks/{id}`: a JSON merge patch (RFC 7396) of `url`, `description`
 * (null removes it), `eventTypes` and `enabled`. A field left out is kept.
 */
export const WebhookPatchSchema = v.object(
  {
    url: v.exactOptional(WebhookUrlSchema),
    description: v.exactOptional(
      v.nullable(
        textSchema(
          'description',
          0,
          WEBHOOK_DESCRIPTION_MAX_LENGTH,
          'What the subscription is for, shown in listings; null removes it',
        ),
      ),
    ),
    eventTypes: v.exactOptional(EventTypesSchema),
    enabled: v.exactOptional(
      v.pipe(
        v.boolean('enabled must be true or false'),
        v.description(
          'false disables it (no new events; pending deliveries wait); true enables it again (they go out, and the failure record starts over)',
        ),
      ),
    ),
  },
  objectMessage,
);
export type WebhookPatch = v.InferOutput<typeof WebhookPatchSchema>;
export type WebhookPatchInput = v.InferInput<typeof WebhookPatchSchema>;

/** The default grace period of a secret rotation: 24 hours, as Stripe's and Svix's. */
export const SECRET_GRACE_PERIOD_DEFAULT_SECONDS = 86_400;
/** The longest grace period a rotation may ask for: 7 days. */
export const SECRET_GRACE_PERIOD_MAX_SECONDS = 604_800;

/** The body of `POST /webhooks/{id}/secret` (optional): `{ gracePeriodSeconds? }`. */
export const RotateWebhookSecretSchema = v.object(
  {
    gracePeriodSeconds: v.exactOptional(
      int32Schema(
        'gracePeriodSeconds',
        `How long deliveries are signed with the previous secret as well, in seconds (default ${SECRET_GRACE_PERIOD_DEFAULT_SECONDS}, 24 h; 0: the previous secret stops at once)`,
        0,
        SECRET_GRACE_PERIOD_MAX_SECONDS,
      ),
    ),
  },
  objectMessage,
);
export type RotateWebhookSecret = v.InferOutput<typeof RotateWebhookSecretSchema>;
export type RotateWebhookSecretInput = v.InferInput<typeof RotateWebhookSecretSchema>;

const SECRET_MESSAGE = 'secret must be whsec_ followed by base64';

/** The answer of `POST /webhooks/{id}/secret`: the new secret, shown this once only. */
export const RotatedWebhookSecretSchema = v.object(
  {
    secret: v.pipe(
      v.string(SECRET_MESSAGE),
      v.description('The new Standard Webhooks signing secret (whsec_ and base64). Shown this once only.'),
      v.metadata({ pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$' }),
      v.check((text) => /^whsec_[A-Za-z0-9+/]+={0,2}$/.test(text), SECRET_MESSAGE),
    ),
    previousSecretExpiresAt: v.exactOptional(
      timestampSchema(
        'previousSecretExpiresAt',
        'Until when deliveries carry a signature with the previous secret too (RFC 3339); absent for a grace period of 0',
      ),
    ),
  },
  objectMessage,
);
export type RotatedWebhookSecret = v.InferOutput<typeof RotatedWebhookSecretSchema>;

/** The body of a `webhook.test` event: the Standard Webhooks envelope, `data` naming the subscription. */
export const WebhookTestEnvelopeSchema = v.object(
  {
    type: v.pipe(v.literal('webhook.test', 'type must be webhook.test'), v.description('A test event')),
    timestamp: timestampSchema('timestamp', 'When the test was asked for (RFC 3339): the same on every attempt'),
    data: v.pipe(
      v.object({ webhookId: v.pipe(WebhookIdSchema, v.description('The subscription tested')) }, objectMessage),
      v.description('Which subscription was tested'),
    ),
  },
  objectMessage,
);
export type WebhookTestEnvelope = v.InferOutput<typeof WebhookTestEnvelopeSchema>;
