import {
  CLIENT_FAULT_CODES,
  type COMMON_ERROR_CODES,
  type ErrorCode,
  type OperationDeclaration,
  type OperationId,
  operationParameters,
  operations,
  type ParameterName,
} from '@plant-store/schema';
import { bodyTooLargeMessage, NOT_JSON_MESSAGE } from '../middleware/json-body.js';
import { type ErrorExample, OPERATION_EXAMPLES, PARAMETER_EXAMPLES } from './examples.js';
import { jsonSchemaOf } from './json-schemas.js';
import { errorContent, errorExample, forbidden, JSON_TYPE, ref } from './openapi-parts.js';

type Json = Record<string, unknown>;
type Examples = Readonly<Record<string, unknown>>;
type ErrorExamples = Readonly<Record<string, ErrorExample>>;

/** Why an operation answers an `error` code: a sentence, a phrase to follow the code (clientFaultsAs400), examples. */
interface ErrorReason {
  readonly code: ErrorCode;
  readonly sentence: string;
  readonly phrase: string;
  readonly examples: ErrorExamples;
}

/** What every operation with a body may answer before its body is validated (BODY_ERROR_CODES). */
function bodyErrors(bodyLimitBytes: number): ErrorReason[] {
  return [
    {
      code: 413,
      sentence: `The body is larger than ${bodyLimitBytes} bytes.`,
      phrase: `body over ${bodyLimitBytes} bytes`,
      examples: { tooLarge: ['Body too large', bodyTooLargeMessage(bodyLimitBytes)] },
    },
    {
      code: 415,
      sentence: 'The body is not `application/json`, or not UTF-8.',
      phrase: 'not `application/json` or not UTF-8',
      examples: { notJson: ['Not JSON', NOT_JSON_MESSAGE] },
    },
  ];
}

/** `paths` entries for every operation of the contract, from its declaration and its examples. */
export function operationPaths({ bodyLimitBytes }: { readonly bodyLimitBytes: number }): Record<string, Json> {
  const paths: Record<string, Json> = {};
  for (const [id, operation] of Object.entries(operations) as Array<[OperationId, OperationDeclaration]>) {
    const names = operation.parameters ?? [];
    const inPath = names.filter((name) => operationParameters[name].in === 'path');
    // Path parameters belong to the path: stated once for all its operations.
    paths[operation.path] ??= inPath.length > 0 ? { parameters: inPath.map(parameterRef) } : {};
    const inQuery = names.filter((name) => !inPath.includes(name));
    (paths[operation.path] as Json)[operation.method.toLowerCase()] = {
      operationId: id,
      tags: [operation.tag],
      summary: operation.summary,
      description: [
        operation.description,
        ...(operation.body
          ? [`Body: \`application/json\` (UTF-8), at most ${bodyLimitBytes} bytes; unknown fields are ignored.`]
          : []),
        `Requires the \`${operation.scope}\` scope.`,
      ].join(' '),
      security: [{ bearerAuth: [operation.scope] }],
      ...(inQuery.length > 0 ? { parameters: inQuery.map(parameterRef) } : {}),
      ...describeExchange(operation, OPERATION_EXAMPLES[id], bodyLimitBytes),
    };
  }
  return paths;
}

/** `components.parameters`: every declared parameter, by its name. */
export function parameterComponents(): Record<string, Json> {
  return Object.fromEntries(
    Object.entries(operationParameters).map(([name, parameter]) => {
      const example = PARAMETER_EXAMPLES[name as ParameterName];
      return [
        name,
        {
          name: parameter.name,
          in: parameter.in,
          description: parameter.description,
          ...(parameter.in === 'path' ? { required: true } : {}),
          schema: jsonSchemaOf(parameter.schema),
          ...(example === undefined ? {} : { example }),
        },
      ];
    }),
  );
}

/** The request body and every response of an operation. */
function describeExchange(
  operation: OperationDeclaration,
  examples: { readonly body?: Examples; readonly success?: Examples; readonly errors: object },
  bodyLimitBytes: number,
): Json {
  const { body, success } = operation;
  const ownErrors = Object.entries(operation.errors).map(([code, reason]): ErrorReason => {
    const errorExamples: ErrorExamples = (examples.errors as Record<string, ErrorExamples>)[code] ?? {};
    return { code: Number(code) as ErrorCode, sentence: reason, phrase: reason, examples: errorExamples };
  });
  const errors = [...ownErrors, ...(body ? bodyErrors(bodyLimitBytes) : [])];
  const clientFaults: readonly number[] = operation.clientFaultsAs400 ? CLIENT_FAULT_CODES : [];
  const grouped = errors.filter((error) => clientFaults.includes(error.code));
  const responses: Json = {
    [success.status]: {
      description: success.description,
      ...(success.paged ? { headers: { Link: ref('headers/Link') } } : {}),
      ...(success.schema ? { content: jsonContent(success.schema, examples.success) } : {}),
    },
  };
  for (const error of errors.filter((candidate) => !grouped.includes(candidate))) {
    responses[error.code] = {
      description: `${error.sentence} \`error\` is ${error.code}.`,
      content: errorContent([error.code], exampleErrors(error)),
    };
  }
  if (grouped.length > 0) {
    const why = grouped.map((error) => `${error.code} ${error.phrase}`).join(', ');
    responses[400] = {
      description: `The request failed because of what the client sent; \`error\` names why: ${why}.`,
      content: errorContent(
        grouped.map((error) => error.code),
        Object.assign({}, ...grouped.map(exampleErrors)),
      ),
    };
  }
  const common: Record<(typeof COMMON_ERROR_CODES)[number], unknown> = {
    401: ref('responses/Unauthorized'),
    403: forbidden(operation.scope),
    500: ref('responses/InternalError'),
    503: ref('responses/DatabaseUnavailable'),
  };
  return {
    ...(body
      ? {
          requestBody: {
            description: body.description,
            required: true,
            content: jsonContent(body.schema, examples.body),
          },
        }
      : {}),
    responses: { ...responses, ...common },
  };
}

function jsonContent(schema: Parameters<typeof jsonSchemaOf>[0], examples: Examples = {}) {
  const values = Object.fromEntries(Object.entries(examples).map(([name, value]) => [name, { value }]));
  return { [JSON_TYPE]: { schema: jsonSchemaOf(schema), examples: values } };
}

function exampleErrors({ code, examples }: ErrorReason) {
  return Object.fromEntries(
    Object.entries(examples).map(([name, [summary, message]]) => [name, errorExample(code, message, summary)]),
  );
}

function parameterRef(name: ParameterName) {
  return ref(`parameters/${name}`);
}
