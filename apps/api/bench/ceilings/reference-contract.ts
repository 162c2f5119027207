/**
 * The Fastify reference's validators and serializers, built from the service's own OpenAPI
 * document (apps/api/openapi.json, written from packages/schema and checked by
 * `pnpm openapi:check`): Ajv validators of the request bodies and query parameters, and
 * fast-json-stringify serializers of the Plant and Error shapes. Nothing is copied by hand but
 * the wording of a failed rule, which is the contract's ("name must be a string of 1 to 255
 * characters"), filled in from the schema's own limits.
 *
 * Ajv reads a body JSON.parse made: an int64 past 2^53 arrives rounded. The type and range rule of
 * an int64 (format int64) is judged here on the exact text instead: on a body's `id` by reading it
 * again losslessly, only when the double is not a safe integer (one create in 16 of the bench's);
 * on a path or query parameter from its text.
 */
import { readFileSync } from 'node:fs';
import { INT64_MAX, INT64_MIN, parseJson } from '@plant-store/schema';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fastJson from 'fast-json-stringify';

type Json = Record<string, unknown>;

const DOCUMENT = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8')) as Json;

/** The object at a `#/...` pointer of the document. */
function pointer(ref: string): Json {
  let node: unknown = DOCUMENT;
  for (const part of ref.replace(/^#\//, '').split('/')) node = (node as Json)[part.replace(/~1/g, '/')];
  if (typeof node !== 'object' || node === null) throw new Error(`openapi.json has nothing at ${ref}`);
  return node as Json;
}

/** `value` with every `$ref` replaced by what it names (the contract's schemas have no cycles). */
function resolve(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(resolve);
  if (typeof value !== 'object' || value === null) return value;
  const ref = (value as Json).$ref;
  if (typeof ref === 'string') return resolve(pointer(ref));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolve(item)]));
}

function operation(path: string, method: string): Json {
  const item = (DOCUMENT.paths as Json)[path] as Json | undefined;
  const found = item?.[method];
  if (found === undefined) throw new Error(`openapi.json has no ${method.toUpperCase()} ${path}`);
  return resolve(found) as Json;
}

function requestBodySchema(op: Json): Json {
  const content = (op.requestBody as Json).content as Record<string, { schema: Json }>;
  const [first] = Object.values(content);
  if (first === undefined) throw new Error('an operation without a request body schema');
  return first.schema;
}

/** The query parameters of an operation as one object schema (each optional, as the contract has them). */
function querySchema(op: Json, leaveOut: readonly string[]): Json {
  const parameters = (op.parameters as Json[]).filter((parameter) => parameter.in === 'query');
  const properties = Object.fromEntries(
    parameters.filter(({ name }) => !leaveOut.includes(String(name))).map(({ name, schema }) => [name, schema]),
  );
  return { type: 'object', properties };
}

const INT32_FORMAT = { type: 'number', validate: (x: number) => x >= -(2 ** 31) && x <= 2 ** 31 - 1 } as const;
// The int64 rule is judged on the exact text (see above); Ajv checks the type only.
const FORMATS = { int32: INT32_FORMAT, int64: true, uuid: true } as const;
// `strict: false`: the document's `example` and `description` keywords are not Ajv's. `verbose`:
// an error carries the schema it broke (its limits make the message); it costs nothing on a pass.
const OPTIONS = { strict: false, formats: FORMATS, verbose: true } as const;
const bodies = new Ajv2020(OPTIONS);
// A query arrives as text: `limit=20` is coerced to the integer the schema wants.
const queries = new Ajv2020({ ...OPTIONS, coerceTypes: true });

const createPlant = operation('/plants', 'post');
const listPlants = operation('/plants', 'get');
const getPlant = operation('/plants/{id}', 'get');
const updatePlant = operation('/plants/{id}', 'patch');
const listEvents = operation('/events', 'get');

export const validateNewPlant: ValidateFunction = bodies.compile(requestBodySchema(createPlant));
export const validatePlantPatch: ValidateFunction = bodies.compile(requestBodySchema(updatePlant));
// `after` is an int64 (plants) or a cursor the feed checks itself: both read from their text.
export const validatePlantsQuery: ValidateFunction = queries.compile(querySchema(listPlants, ['after']));
export const validateEventsQuery: ValidateFunction = queries.compile(querySchema(listEvents, []));

function successSchema(op: Json): Json {
  const content = ((op.responses as Json)['200'] as Json).content as Record<string, { schema: Json }>;
  const schema = content['application/json']?.schema;
  if (schema === undefined) throw new Error('an operation without a JSON 200');
  return schema;
}

/** `{"id","name","tag"?}` (a StoredPlant, which is also a create's event payload); `id` a number or bigint. */
export const stringifyPlant: (plant: PlantOut) => string = fastJson(successSchema(getPlant) as never);
export const stringifyError: (error: { error: number; message: string }) => string = fastJson(
  pointer('#/components/schemas/Error') as never,
);

export interface PlantOut {
  readonly id: number | bigint;
  readonly name: string;
  readonly tag?: string;
}

/** An int64 in text form: `id` of a path, `after` of a query; null when it is none. */
export function parseInt64Text(text: string): bigint | null {
  if (!/^-?\d{1,19}$/.test(text)) return null;
  const value = BigInt(text);
  return value < INT64_MIN || value > INT64_MAX ? null : value;
}

export function int64Message(field: string): string {
  return `${field} must be an integer between ${INT64_MIN} and ${INT64_MAX}`;
}

/** The exact id of a body Ajv accepted: the double itself when it is exact, else the body read losslessly. */
export function exactId(id: number, text: string): bigint | number | null {
  if (Number.isSafeInteger(id)) return id;
  const exact = (parseJson(text) as { id?: unknown }).id;
  return typeof exact === 'bigint' && exact >= INT64_MIN && exact <= INT64_MAX ? exact : null;
}

/**
 * The contract's sentence for the first rule Ajv found broken, as close as Ajv's report allows:
 * the field and the rule it broke, with the limits its schema gives.
 */
export function messageOf(errors: readonly ErrorObject[] | null | undefined, what: string): string {
  const [first] = errors ?? [];
  if (first === undefined) return `${what} is invalid`;
  if (first.keyword === 'required') return `${String(first.params.missingProperty)} is required`;
  const field = first.instancePath.slice(1).split('/')[0] ?? '';
  if (field === '') return `${what} must be a JSON object`;
  const schema = first.parentSchema as Json | undefined;
  if (schema?.format === 'int64') return int64Message(field);
  if (schema?.type === 'integer') {
    return `${field} must be an integer between ${String(schema.minimum)} and ${String(schema.maximum)}`;
  }
  if (first.keyword === 'pattern') return `${field} must be valid Unicode text without NUL characters (U+0000)`;
  if (schema?.type === 'string' || first.keyword === 'anyOf') {
    const options = (schema?.anyOf ?? []) as Json[];
    const text = (first.keyword === 'anyOf' ? options[0] : schema) ?? {};
    const min = typeof text.minLength === 'number' ? text.minLength : 0;
    const max = String(text.maxLength);
    return min > 0
      ? `${field} must be a string of ${min} to ${max} characters`
      : `${field} must be a string of at most ${max} characters`;
  }
  if (Array.isArray(schema?.enum)) return `${field} must be one of ${schema.enum.join(', ')}`;
  return `${field} ${first.message ?? 'is invalid'}`;
}
