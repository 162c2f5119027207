import {
  CLIENT_FAULT_CODES,
  type ErrorCode,
  EXPORT_CURSOR_HEADER,
  MAX_JSON_DEPTH,
  NDJSON_TYPE,
  type OperationDeclaration,
  type OperationId,
  operationParameters,
  operations,
  type ParameterName,
} from '@plant-store/schema';
import { bodyTooLargeMessage, NOT_JSON_MESSAGE } from '../middleware/json-body.js';
import { type ErrorExample, FORBIDDEN_EXAMPLES, OPERATION_EXAMPLES, PARAMETER_EXAMPLES } from './examples.js';
import { jsonSchemaOf } from './json-schemas.js';
import { errorContent, errorExample, forbidden, JSON_TYPE, ref } from './openapi-parts.js';

type Json = Record<string, unknown>;
type Examples<TValue = unknown> = Readonly<Record<string, TValue>>;

/** Why an operation answers an `error` code: a sentence, or after the code a phrase (clientFaultsAs400). */
interface ErrorReason {
  readonly code: ErrorCode;
  readonly sentence: string;
  readonly phrase: string;
  readonly examples: Examples<ErrorExample>;
}

/** What an operation with a body may answer before the body is validated (BODY_ERROR_CODES). */
function bodyErrors(limit: number): ErrorReason[] {
  const tooLarge = { tooLarge: ['Body too large', bodyTooLargeMessage(limit)] } as const;
  const notJson = { notJson: ['Not JSON', NOT_JSON_MESSAGE] } as const;
  return [
    {
      code: 413,
      sentence: `The body is larger than ${limit} bytes.`,
      phrase: `body over ${limit} bytes`,
      examples: tooLarge,
    },
    {
      code: 415,
      sentence: 'The body is not `application/json`, or not UTF-8.',
      phrase: 'not `application/json` or not UTF-8',
      examples: notJson,
    },
  ];
}

/** `paths` entries for every operation of the contract, from its declaration and its examples. */
export function operationPaths({ bodyLimitBytes }: { readonly bodyLimitBytes: number }): Record<string, Json> {
  const paths: Record<string, Json> = {};
  for (const [id, operation] of Object.entries(operations) as Array<[OperationId, OperationDeclaration]>) {
    const { body, scope } = operation;
    const alsoRequires = operation.alsoRequires ?? [];
    const scopes = [scope, ...alsoRequires];
    const preconditions = operation.preconditions ?? [];
    const names = operation.parameters ?? [];
    const inPath = names.filter((name) => operationParameters[name].in === 'path');
    const inQuery = names.filter((name) => !inPath.includes(name));
    // Path parameters belong to the path: stated once for all its operations.
    paths[operation.path] ??= inPath.length > 0 ? { parameters: inPath.map(parameterRef) } : {};
    const examples: { body?: Examples; success?: Examples; errors: Examples<Examples<ErrorExample>> } =
      OPERATION_EXAMPLES[id];
    (paths[operation.path] as Json)[operation.method.toLowerCase()] = {
      operationId: id,
      tags: [operation.tag],
      summary: operation.summary,
      description: [
        operation.description,
        ...(body
          ? [
              operation.streamed === 'request'
                ? `Body: ${ndjsonLimits(bodyLimitBytes)}; unknown fields are ignored.`
                : `Body: ${bodyLimits(bodyLimitBytes)}; unknown fields are ignored.`,
            ]
          : []),
        scopes.length === 1
          ? `Requires the \`${scope}\` scope.`
          : `Requires the ${scopes.map((name) => `\`${name}\``).join(' and ')} scopes.`,
      ].join(' '),
      security: [{ bearerAuth: scopes }],
      ...(inQuery.length > 0 || preconditions.length > 0
        ? { parameters: [...inQuery.map(parameterRef), ...preconditions.map((name) => ref(`parameters/${name}`))] }
        : {}),
      ...(body
        ? {
            requestBody: {
              description: `${body.description}: ${
                operation.streamed === 'request' ? ndjsonLimits(bodyLimitBytes) : bodyLimits(bodyLimitBytes)
              }.`,
              required: body.optional !== true,
              content: jsonContent(body.schema, examples.body, body.mediaTypes),
            },
          }
        : {}),
      responses: {
        [operation.success.status]: {
          description: operation.success.description,
          ...(operation.success.paged ? { headers: { Link: ref('headers/Link') } } : {}),
          ...(operation.streamed === 'response' ? { headers: exportHeaders() } : {}),
          ...(operation.success.etag ? { headers: { ETag: ref('headers/ETag') } } : {}),
          ...(operation.success.schema
            ? {
                content: jsonContent(
                  operation.success.schema,
                  examples.success,
                  operation.streamed === 'response' ? [NDJSON_TYPE] : undefined,
                ),
              }
            : {}),
        },
        ...(preconditions.includes('If-None-Match')
          ? {
              304: {
                description: 'Not modified: the client holds the current version (`If-None-Match`). No body.',
                headers: { ETag: ref('headers/ETag') },
              },
            }
          : {}),
        ...errorResponses(operation, examples.errors, bodyLimitBytes),
        // COMMON_ERROR_CODES
        401: ref('responses/Unauthorized'),
        403: forbidden(scope, alsoRequires, operation.forbiddenWhen, FORBIDDEN_EXAMPLES[id]),
        429: ref('responses/TooManyRequests'),
        500: ref('responses/InternalError'),
        503: ref('responses/DatabaseUnavailable'),
      },
    };
  }
  return paths;
}

/** What every JSON body must keep to, as the service enforces it (413, 415 and 400 otherwise). */
function bodyLimits(bodyLimitBytes: number): string {
  return (
    `\`application/json\` (UTF-8), at most ${bodyLimitBytes} bytes (after \`Content-Encoding\`: identity, gzip, deflate or br), ` +
    `nested at most ${MAX_JSON_DEPTH} levels of arrays and objects`
  );
}

/** What a streamed NDJSON body must keep to (see OperationDeclaration.streamed). */
function ndjsonLimits(maxLineBytes: number): string {
  return (
    `\`${NDJSON_TYPE}\` (UTF-8), one JSON object a line (each line one object of the schema shown), of any length, ` +
    `each line at most ${maxLineBytes} bytes (after \`Content-Encoding\`: identity, gzip, deflate or br); blank lines are skipped`
  );
}

/** The headers of an export's answer. */
function exportHeaders(): Json {
  return {
    [EXPORT_CURSOR_HEADER]: {
      description:
        "The event feed's cursor of the export's snapshot: follow `GET /events?after=` from it to keep a copy loaded from the export up to date.",
      schema: { type: 'string', example: '1841.0' },
    },
  };
}

/** `components.parameters`: every declared parameter, by its name. */
export function parameterComponents(): Record<string, Json> {
  return Object.fromEntries(
    Object.entries(operationParameters).map(([name, parameter]) => {
      const example = PARAMETER_EXAMPLES[name as ParameterName];
      const { name: wireName, in: location, description, schema } = parameter;
      const required = location === 'path' ? { required: true } : {};
      const json = { name: wireName, in: location, description, ...required, schema: jsonSchemaOf(schema) };
      return [name, example === undefined ? json : { ...json, example }];
    }),
  );
}

/**
 * One response per `error` code the operation has of its own or from reading its body; under
 * clientFaultsAs400 the client's faults share the 400 response, `error` naming which.
 */
function errorResponses(
  operation: OperationDeclaration,
  examples: Examples<Examples<ErrorExample>>,
  bodyLimitBytes: number,
): Json {
  const reasons = [
    ...Object.entries(operation.errors).map(
      ([code, reason]): ErrorReason => ({
        code: Number(code) as ErrorCode,
        sentence: reason,
        phrase: reason,
        examples: examples[code] ?? {},
      }),
    ),
    // A streamed body has no size limit (its lines have: a 400 naming the line).
    ...(operation.body
      ? bodyErrors(bodyLimitBytes).filter((reason) => operation.streamed !== 'request' || reason.code !== 413)
      : []),
  ];
  const faults: readonly number[] = operation.clientFaultsAs400 ? CLIENT_FAULT_CODES : [];
  const grouped = reasons.filter((reason) => faults.includes(reason.code));
  const responses: Json = {};
  for (const reason of reasons.filter((candidate) => !grouped.includes(candidate))) {
    const content = errorContent([reason.code], exampleErrors(reason));
    responses[reason.code] = { description: `${reason.sentence} \`error\` is ${reason.code}.`, content };
  }
  if (grouped.length > 0) {
    const why = grouped.map((reason) => `${reason.code} ${reason.phrase}`).join(', ');
    responses[400] = {
      description: `The request failed because of what the client sent; \`error\` names why: ${why}.`,
      content: errorContent(
        grouped.map((reason) => reason.code),
        Object.assign({}, ...grouped.map(exampleErrors)),
      ),
    };
  }
  return responses;
}

function jsonContent(
  schema: Parameters<typeof jsonSchemaOf>[0],
  examples: Examples = {},
  mediaTypes: readonly string[] = [JSON_TYPE],
) {
  const values = Object.fromEntries(Object.entries(examples).map(([name, value]) => [name, { value }]));
  const content = { schema: jsonSchemaOf(schema), examples: values };
  return Object.fromEntries(mediaTypes.map((type) => [type, content]));
}

function exampleErrors({ code, examples }: ErrorReason) {
  const entries = Object.entries(examples).map(([name, [summary, message]]) => [
    name,
    errorExample(code, message, summary),
  ]);
  return Object.fromEntries(entries);
}

function parameterRef(name: ParameterName) {
  return ref(`parameters/${name}`);
}
