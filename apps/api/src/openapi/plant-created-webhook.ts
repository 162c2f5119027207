import { EXAMPLE_EVENT_ID, NEW_PLANT_EXAMPLES } from './examples.js';
import { JSON_TYPE, ref } from './openapi-parts.js';

/**
 * The document's `webhooks`: the request the service sends to every registered URL when a
 * plant is created. Named `/plant/webhook`, as in the upstream "OpenAPI Plant Store" sample.
 */
export function plantCreatedWebhook() {
  return {
    '/plant/webhook': {
      post: {
        operationId: 'plantCreated',
        tags: ['webhooks'],
        summary: 'A plant was created',
        description: [
          'Information about a new plant added to the store, POSTed to every registered webhook when a plant is created (a create that is replayed, with the same id and content, sends nothing).',
          'Signed as [Standard Webhooks](https://www.standardwebhooks.com/) specify: verify `webhook-signature` with the secret shown at registration, over `webhook-id`, `webhook-timestamp` and the exact body bytes (the `standardwebhooks` libraries do it), and refuse old timestamps.',
          'At-least-once: the same event may arrive more than once (a retry after a lost answer, a resend); deduplicate by `webhook-id`. Events may arrive out of order.',
          'The body is the NewPlant; `id` is an exact int64 (read it with a JSON parser that keeps big integers). Sent with `User-Agent: plant-store-webhooks/1`; redirects are never followed.',
        ].join(' '),
        security: [],
        parameters: webhookHeaderParameters(),
        requestBody: {
          description: 'Information about a new plant added to the store',
          required: true,
          content: {
            [JSON_TYPE]: {
              schema: ref('schemas/NewPlant'),
              examples: {
                tagged: { value: NEW_PLANT_EXAMPLES.tagged },
                untagged: { value: NEW_PLANT_EXAMPLES.untagged },
              },
            },
          },
        },
        responses: webhookResponses(),
      },
    },
  };
}

/** The headers of every delivery, whatever its event: Standard Webhooks' three. */
export function webhookHeaderParameters() {
  return [
    {
      name: 'webhook-id',
      in: 'header',
      required: true,
      description:
        'The event id: `msg_` and a UUID, the same on every attempt and for every subscription. Deduplicate by it.',
      schema: { type: 'string', pattern: '^msg_[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}$' },
      example: EXAMPLE_EVENT_ID,
    },
    {
      name: 'webhook-timestamp',
      in: 'header',
      required: true,
      description:
        'When this attempt was signed, in whole seconds since the Unix epoch. Refuse ones far from now (replays).',
      schema: { type: 'integer', format: 'int64', minimum: 0 },
      example: 1795430887,
    },
    {
      name: 'webhook-signature',
      in: 'header',
      required: true,
      description:
        'Space-separated signatures `v1,<base64>`: HMAC-SHA256 with the secret (its base64 after `whsec_`) over `<webhook-id>.<webhook-timestamp>.<body>`.',
      schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/]+={0,2}( v1,[A-Za-z0-9+/]+={0,2})*$' },
      example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
    },
  ];
}

/** What a receiver answers, whatever the event. */
export function webhookResponses() {
  return {
    '2XX': {
      description: 'Acknowledged: the delivery is done. Answer quickly (within 10 s); the body is ignored.',
    },
    default: {
      description:
        'Anything else (a 3xx included: redirects are not followed), or no answer within 10 s, fails the attempt: the delivery is retried, by default after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (each ±20%), then marked failed. `POST /webhooks/{id}/deliveries/{deliveryId}/resend` sends it again.',
    },
  };
}
