import {
  CreatedTokenSchema,
  CreatedWebhookSchema,
  ErrorSchema,
  NewPlantSchema,
  NewTokenSchema,
  NewWebhookSchema,
  StoredPlantSchema,
  TokenSchema,
  WebhookDeliveryAttemptSchema,
  WebhookDeliverySchema,
  WebhookSchema,
} from '@plant-store/schema';
import { type ConversionConfig, type JsonSchema, toJsonSchema, toJsonSchemaDefs } from '@valibot/to-json-schema';

/**
 * The contract's named shapes, as they appear under `components.schemas`: each one some
 * operation or webhook uses. The spec's `Plant` (`name`, `tag`) is used by none: every plant the
 * service reads or answers carries its id, as `NewPlant` and `StoredPlant` (the spec's Plant
 * shape plus its id); so it is not shown, as third-party linters flag an unused component.
 */
const NAMED_SCHEMAS = {
  NewPlant: NewPlantSchema,
  StoredPlant: StoredPlantSchema,
  Error: ErrorSchema,
  NewWebhook: NewWebhookSchema,
  Webhook: WebhookSchema,
  CreatedWebhook: CreatedWebhookSchema,
  WebhookDelivery: WebhookDeliverySchema,
  WebhookDeliveryAttempt: WebhookDeliveryAttemptSchema,
  NewToken: NewTokenSchema,
  Token: TokenSchema,
  CreatedToken: CreatedTokenSchema,
};

type Json = JsonSchema & Record<string, unknown>;

/**
 * How the schema package's valibot schemas become OpenAPI 3.1 (JSON Schema 2020-12) schemas.
 * - `typeMode: 'input'` describes what the wire carries: pipelines stop before the transform
 *   that turns an int64 into a bigint.
 * - A bigint is a JSON integer (the exact codec reads every integer as one), and a union that
 *   admits a bigint admits every integer: it collapses to `{ type: 'integer' }` plus the
 *   format its metadata gives (int64, int32).
 * - `check` actions run JavaScript; each one that matters also carries JSON Schema metadata
 *   (minLength/maxLength in code points, int64 format) beside it in the schema package.
 */
const CONVERSION: ConversionConfig = {
  target: 'draft-2020-12',
  typeMode: 'input',
  ignoreActions: ['check'],
  overrideSchema(context) {
    if (context.valibotSchema.type === 'bigint') return { type: 'integer' };
    const options = (context.jsonSchema as Json).anyOf;
    if (context.valibotSchema.type === 'union' && Array.isArray(options)) {
      const admitsBigint = 'options' in context.valibotSchema && hasBigintOption(context.valibotSchema.options);
      if (admitsBigint && options.every((option) => typeof option === 'object' && option.type === 'integer')) {
        const { anyOf: _, ...rest } = context.jsonSchema as Json;
        return { ...rest, type: 'integer' };
      }
    }
    return undefined;
  },
  overrideRef: (context) => `#/components/schemas/${context.referenceId}`,
};

function hasBigintOption(options: unknown): boolean {
  return Array.isArray(options) && options.some((option: { type?: unknown }) => option.type === 'bigint');
}

/** Drops what belongs to a standalone JSON Schema document, not to an OpenAPI schema object. */
function withoutDialect({ $schema: _dialect, $defs: _definitions, ...schema }: Json): Json {
  return schema;
}

/** `components.schemas`: the plant, webhook, token and Error shapes, from the schema package. */
export function componentSchemas(): Record<keyof typeof NAMED_SCHEMAS, Json> {
  return toJsonSchemaDefs(NAMED_SCHEMAS, CONVERSION) as Record<keyof typeof NAMED_SCHEMAS, Json>;
}

/** A schema converted with references to the named components where it uses them. */
export function jsonSchemaOf(schema: Parameters<typeof toJsonSchema>[0]): Json {
  return withoutDialect(toJsonSchema(schema, { ...CONVERSION, definitions: NAMED_SCHEMAS }) as Json);
}

/** A schema converted as the document shows it, with every named component written out in place. */
export function inlineJsonSchemaOf(schema: Parameters<typeof toJsonSchema>[0]): Json {
  return withoutDialect(toJsonSchema(schema, CONVERSION) as Json);
}
