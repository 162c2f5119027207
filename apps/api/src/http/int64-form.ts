import type { IncomingHttpHeaders } from 'node:http';
import { invalidRequest } from './api-error.js';
import { readInteger } from './query.js';

/**
 * The request header that chooses how int64s travel in a request's and its answer's JSON:
 * `number` (the default: exact JSON integers) or `string` (decimal strings, for clients whose
 * JSON reader rounds integers beyond 2^53, such as those generated from the OpenAPI document).
 * Read once per request, for every operation of the contract (see mountOperations).
 */
export const INT64_HEADER = 'Plant-Store-Int64';

/** How int64s are written: JSON integers, or decimal strings. */
export type Int64Form = 'number' | 'string';

/** The 400 for a value of the header that is neither form. */
export const INT64_HEADER_MESSAGE = `${INT64_HEADER} must be "string" or "number"`;

const HEADER_KEY = INT64_HEADER.toLowerCase();

/** The form a request asks for; a value that names neither is refused (a typo must not quietly give numbers). */
export function int64FormOf(headers: IncomingHttpHeaders): Int64Form {
  const value = headers[HEADER_KEY];
  if (value === undefined || value === 'number') return 'number';
  if (value === 'string') return 'string';
  throw invalidRequest(INT64_HEADER_MESSAGE);
}

/**
 * An answer's JSON with every bigint (the program's int64s, see the schema package) written as a
 * decimal string. No other value is a bigint: int32s and other numbers stay JSON numbers.
 */
export function stringifyJsonWithInt64Strings(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? item.toString() : item));
}

/** A JSON Schema as @valibot/to-json-schema writes it (what the OpenAPI document shows). */
type JsonSchema = Readonly<Record<string, unknown>>;

type Reader = (value: unknown) => unknown;

/** Whether a JSON Schema is the contract's int64: `{ type: 'integer', format: 'int64' }`. */
export function isInt64Schema(schema: JsonSchema): boolean {
  return schema.type === 'integer' && schema.format === 'int64';
}

/**
 * For a request body under `Plant-Store-Int64: string`: a function that turns every decimal
 * string standing where `schema` (the body's JSON Schema, references inlined) has an int64 into
 * a bigint, as a JSON integer would have been read, and leaves everything else as it is, numbers
 * included; the body's own schema then judges the result with its usual messages. Undefined when
 * the schema has no int64 anywhere (nothing to do).
 */
export function int64StringReader(schema: JsonSchema): Reader | undefined {
  if (isInt64Schema(schema)) return (value) => (typeof value === 'string' ? readInteger(value) : value);
  const readers: Reader[] = [];
  const properties = asSchemaRecord(schema.properties);
  const propertyReaders = Object.entries(properties).flatMap(([name, property]) => {
    const read = int64StringReader(property);
    return read ? [[name, read] as const] : [];
  });
  const additional = isSchema(schema.additionalProperties) ? int64StringReader(schema.additionalProperties) : undefined;
  if (propertyReaders.length > 0 || additional) {
    readers.push((value) => {
      if (!isPlainObject(value)) return value;
      const read: Record<string, unknown> = { ...value };
      for (const [name, readProperty] of propertyReaders) {
        if (Object.hasOwn(read, name)) read[name] = readProperty(read[name]);
      }
      if (additional) {
        for (const name of Object.keys(read)) if (!Object.hasOwn(properties, name)) read[name] = additional(read[name]);
      }
      return read;
    });
  }
  const item = isSchema(schema.items) ? int64StringReader(schema.items) : undefined;
  const prefix = Array.isArray(schema.prefixItems)
    ? (schema.prefixItems as unknown[]).map((entry) => (isSchema(entry) ? int64StringReader(entry) : undefined))
    : [];
  if (item || prefix.some(Boolean)) {
    readers.push((value) =>
      Array.isArray(value)
        ? value.map((entry, index) => {
            const read = index < prefix.length ? prefix[index] : item;
            return read ? read(entry) : entry;
          })
        : value,
    );
  }
  // A union or intersection: what any of its schemas reads as an int64 is read as one.
  for (const keyword of ['anyOf', 'oneOf', 'allOf'] as const) {
    const options = schema[keyword];
    if (!Array.isArray(options)) continue;
    for (const option of options) {
      const read = isSchema(option) ? int64StringReader(option) : undefined;
      if (read) readers.push(read);
    }
  }
  if (readers.length === 0) return undefined;
  return (value) => readers.reduce((read, reader) => reader(read), value);
}

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asSchemaRecord(value: unknown): Readonly<Record<string, JsonSchema>> {
  return isSchema(value) ? (value as Readonly<Record<string, JsonSchema>>) : {};
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
