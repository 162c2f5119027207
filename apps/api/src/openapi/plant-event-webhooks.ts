import {
  type PlantEventEnvelope,
  PlantEventEnvelopeSchema,
  type WebhookTestEnvelope,
  WebhookTestEnvelopeSchema,
} from '@plant-store/schema';
import type * as v from 'valibot';
import { inlineJsonSchemaOf } from './json-schemas.js';
import { JSON_TYPE } from './openapi-parts.js';
import { webhookHeaderParameters, webhookResponses } from './plant-created-webhook.js';

/**
 * The document's `webhooks` besides `/plant/webhook`: the Standard Webhooks envelope each event
 * type is sent as to a subscription that chose any type but `plant.created` alone, and the test
 * event every subscription may be sent.
 */

const EXAMPLE_DATA = { id: 4201n, name: 'Monstera deliciosa', tag: 'aroid' };

const ENVELOPE_NOTE = [
  'Sent as a Standard Webhooks envelope `{type, timestamp, data}` to each subscription whose `eventTypes` include this type (unless it chose `plant.created` alone, which gets the `/plant/webhook` body).',
  '`data` is the plant with its `version`; ids are exact int64s (read them with a JSON parser that keeps big integers).',
  'Signed, retried and deduplicated as `/plant/webhook` says (`webhook-id` is the event id, the same as in `GET /events`).',
  'Per plant, versions grow in commit order, but deliveries are not ordered (a retry can arrive after a later event): keep the highest `data.version` you applied for each id and drop an event whose version is not above it.',
].join(' ');

const PLANT_EVENTS = {
  'plant.created': {
    summary: 'A plant was created (envelope)',
    description: 'A plant was created: `data` is the plant as created, with its first version.',
    example: { type: 'plant.created', timestamp: '2026-11-27T10:48:07.123Z', data: { ...EXAMPLE_DATA, version: 16n } },
  },
  'plant.updated': {
    summary: 'A plant was changed',
    description:
      'A plant was changed (`PATCH /plants/{id}`): `data` is the plant after the change, with its new version.',
    example: {
      type: 'plant.updated',
      timestamp: '2026-11-27T10:49:30.004Z',
      data: { ...EXAMPLE_DATA, name: 'Monstera borsigiana', version: 17n },
    },
  },
  'plant.deleted': {
    summary: 'A plant was deleted',
    description:
      "A plant was deleted: `data` is the plant as it was, with the deletion's own version (above every version the plant had): remove it, and remember the version for its id.",
    example: { type: 'plant.deleted', timestamp: '2026-11-27T10:51:02.250Z', data: { ...EXAMPLE_DATA, version: 18n } },
  },
} satisfies Record<PlantEventEnvelope['type'], { summary: string; description: string; example: PlantEventEnvelope }>;

const TEST_EXAMPLE: WebhookTestEnvelope = {
  type: 'webhook.test',
  timestamp: '2026-11-27T14:10:00.000Z',
  data: { webhookId: '6f1c2a8e-3b4d-4e5f-8a9b-0c1d2e3f4a5b' },
};

function operationIdOf(type: string): string {
  return type.replace(/\.(\w)/g, (_, letter: string) => letter.toUpperCase());
}

function eventWebhook(type: string, summary: string, description: string, schema: v.GenericSchema, example: unknown) {
  return {
    post: {
      operationId: `${operationIdOf(type)}Event`,
      tags: ['webhooks'],
      summary,
      description,
      security: [],
      parameters: webhookHeaderParameters(),
      requestBody: {
        description: `The \`${type}\` event`,
        required: true,
        content: { [JSON_TYPE]: { schema: inlineJsonSchemaOf(schema), examples: { [type]: { value: example } } } },
      },
      responses: webhookResponses(),
    },
  };
}

/** One webhook per plant event type, then `webhook.test`. */
export function plantEventWebhooks() {
  return {
    ...Object.fromEntries(
      Object.entries(PLANT_EVENTS).map(([type, event]) => [
        type,
        eventWebhook(
          type,
          event.summary,
          `${event.description} ${ENVELOPE_NOTE}`,
          PlantEventEnvelopeSchema,
          event.example,
        ),
      ]),
    ),
    'webhook.test': eventWebhook(
      'webhook.test',
      'A test event',
      'Sent by `POST /webhooks/{id}/test` to that subscription, whatever its `eventTypes`, as a Standard Webhooks envelope whose `data` names the subscription. Signed and retried as every event; it shows in the delivery log (`eventType` `webhook.test`). Answer it as any other event.',
      WebhookTestEnvelopeSchema,
      TEST_EXAMPLE,
    ),
  };
}
