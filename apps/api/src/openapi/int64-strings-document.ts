import { ErrorCode, type OperationDeclaration, operations } from '@plant-store/schema';
import { INT64_HEADER, INT64_HEADER_MESSAGE, isInt64Schema } from '../http/int64-form.js';
import type { OpenApiDocument } from './openapi-document.js';
import { errorContent, errorExample, JSON_TYPE, ref } from './openapi-parts.js';

type Json = Record<string, unknown>;

/**
 * An int64 as a decimal string: what the service writes (no leading zeros, no plus sign), and
 * accepts within the int64 range. The range itself is the service's to check.
 */
export const INT64_STRING_PATTERN = '^(0|-?[1-9][0-9]{0,18})$';

/** The name of the header parameter under `components.parameters`. */
const HEADER_PARAMETER = 'int64Form';

const HEADER_REFUSED = `the \`${INT64_HEADER}\` header is neither \`string\` nor \`number\``;

/**
 * The document as a client that sends `Plant-Store-Int64: string` sees the service: the same
 * document, rewritten rather than written twice. Every int64 schema of the operations and
 * components (bodies, answers, path and query parameters) becomes a decimal string with
 * INT64_STRING_PATTERN, example ids become strings, and every operation of the contract declares
 * the header (and the 400 that answers another value of it). The `webhooks` are requests the
 * service sends, whatever a request asked: they keep their integers, their component schemas
 * written out in place (the components now describe strings).
 */
export function withInt64Strings(document: OpenApiDocument): OpenApiDocument {
  const components = document.components as Json;
  const numberSchemas = components.schemas as Json;
  const rewritten = Object.fromEntries(
    Object.entries(document).map(([key, value]) => [
      key,
      key === 'webhooks' ? inlineSchemaRefs(value, numberSchemas, []) : int64sAsStrings(value),
    ]),
  );
  const rewrittenComponents = rewritten.components as Json;
  rewrittenComponents.parameters = {
    ...(rewrittenComponents.parameters as Json),
    [HEADER_PARAMETER]: headerParameter(),
  };
  const paths = rewritten.paths as Record<string, Json>;
  for (const operation of Object.values(operations) as OperationDeclaration[]) {
    const described = paths[operation.path]?.[operation.method.toLowerCase()] as Json | undefined;
    if (described === undefined) throw new Error(`${operation.method} ${operation.path} is not in the document`);
    declareHeader(described);
  }
  return rewritten;
}

function headerParameter(): Json {
  return {
    name: INT64_HEADER,
    in: 'header',
    description: [
      `Send \`${INT64_HEADER}: string\` with every request (once, as a default header of your client): this document describes the answers to such requests.`,
      'Without it the service writes int64s as JSON integers (see `/openapi.json`), which a JSON reader that makes doubles rounds beyond 2^53.',
      `The answer repeats it (\`${INT64_HEADER}: string\`) when it was honoured.`,
    ].join(' '),
    schema: { type: 'string', enum: ['string'] },
    example: 'string',
  };
}

/** The operation takes the header, and its 400 says what another value of it gets. */
function declareHeader(operation: Json): void {
  operation.parameters = [
    ...((operation.parameters as Json[] | undefined) ?? []),
    ref(`parameters/${HEADER_PARAMETER}`),
  ];
  const responses = operation.responses as Json;
  const example = errorExample(ErrorCode.InvalidRequest, INT64_HEADER_MESSAGE, `Another ${INT64_HEADER}`);
  const existing = responses[ErrorCode.InvalidRequest] as Json | undefined;
  if (existing === undefined) {
    responses[ErrorCode.InvalidRequest] = {
      description: `${capitalized(HEADER_REFUSED)}. \`error\` is 400.`,
      content: errorContent([ErrorCode.InvalidRequest], { [HEADER_PARAMETER]: example }),
    };
    return;
  }
  existing.description = `${existing.description} Also when ${HEADER_REFUSED} (\`error\` 400).`;
  const media = (existing.content as Record<string, Json>)[JSON_TYPE] as Json;
  media.examples = { ...(media.examples as Json), [HEADER_PARAMETER]: example };
}

/**
 * A copy of `node` with every int64 schema (`{ type: integer, format: int64 }`) a string schema
 * of decimal digits (keeping its description), and every bigint (an example id) a string.
 */
function int64sAsStrings(node: unknown): unknown {
  if (typeof node === 'bigint') return node.toString();
  if (Array.isArray(node)) return node.map(int64sAsStrings);
  if (typeof node !== 'object' || node === null) return node;
  const record = node as Json;
  if (isInt64Schema(record)) {
    const { type: _type, format: _format, ...rest } = record;
    return { type: 'string', pattern: INT64_STRING_PATTERN, ...(int64sAsStrings(rest) as Json) };
  }
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, int64sAsStrings(value)]));
}

/**
 * A copy of `node` with every reference to a component schema replaced by that schema (itself
 * with its references replaced), siblings of the `$ref` kept beside it.
 */
function inlineSchemaRefs(node: unknown, schemas: Json, seen: readonly string[]): unknown {
  if (Array.isArray(node)) return node.map((item) => inlineSchemaRefs(item, schemas, seen));
  if (typeof node !== 'object' || node === null) return node;
  const { $ref, ...rest } = node as Json;
  const siblings = Object.fromEntries(
    Object.entries(rest).map(([key, value]) => [key, inlineSchemaRefs(value, schemas, seen)]),
  );
  const prefix = '#/components/schemas/';
  if (typeof $ref !== 'string' || !$ref.startsWith(prefix))
    return $ref === undefined ? siblings : { $ref, ...siblings };
  const name = $ref.slice(prefix.length);
  if (seen.includes(name)) throw new Error(`schema ${name} refers to itself: it cannot be written out in place`);
  const schema = schemas[name];
  if (schema === undefined) throw new Error(`no component schema ${name}`);
  return { ...(inlineSchemaRefs(schema, schemas, [...seen, name]) as Json), ...siblings };
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
