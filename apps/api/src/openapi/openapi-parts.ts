import { ErrorCode } from '@plant-store/schema';
import * as v from 'valibot';
import { missingScopeMessage } from '../middleware/bearer-auth.js';

/** Building blocks shared by the document's operations (plants, webhooks). */

export const JSON_TYPE = 'application/json';

/** A reference to `#/components/<path>`. */
export const ref = (path: string) => ({ $ref: `#/components/${path}` });

/** The message the service really answers for an input: the schema package's own. */
export function validationMessage(schema: v.GenericSchema, input: unknown): string {
  const result = v.safeParse(schema, input, { abortEarly: true });
  if (result.success) throw new Error('example input unexpectedly valid');
  return result.issues[0].message;
}

export function errorExample(code: ErrorCode, message: string, summary: string) {
  return { summary, value: { error: code, message } };
}

/**
 * An Error body whose `error` is one of `codes`. The `$ref` sits beside the narrowing (allowed
 * in OpenAPI 3.1 schemas): code generators see the plain Error, validators check the code.
 */
export function errorContent(codes: readonly ErrorCode[], examples: Record<string, ReturnType<typeof errorExample>>) {
  const schema = { $ref: '#/components/schemas/Error', properties: { error: { enum: codes } } };
  return { [JSON_TYPE]: { schema, examples } };
}

/** The 403 of an operation that needs `scope`. */
export function forbidden(scope: string) {
  return {
    description: `The token lacks the \`${scope}\` scope. \`error\` is 403.`,
    headers: { 'WWW-Authenticate': ref('headers/WWW-Authenticate') },
    content: errorContent([ErrorCode.NotAllowed], {
      scope: errorExample(ErrorCode.NotAllowed, missingScopeMessage(scope), 'Missing scope'),
    }),
  };
}

/**
 * The 400 of a paged listing (`GET /plants`, `GET /webhooks/{id}/deliveries`): a query parameter
 * ill-formed, out of range or repeated, shown with the messages `querySchema` really gives.
 */
export function pageQueryRefused(querySchema: v.GenericSchema, maxLimit: number) {
  return {
    description: 'A query parameter is ill-formed or out of range, or given twice. `error` is 400.',
    content: errorContent([ErrorCode.InvalidRequest], {
      limit: errorExample(
        ErrorCode.InvalidRequest,
        validationMessage(querySchema, { limit: maxLimit + 1 }),
        'limit out of range',
      ),
      after: errorExample(
        ErrorCode.InvalidRequest,
        validationMessage(querySchema, { after: 'abc' }),
        'after is not an int64',
      ),
    }),
  };
}

export interface PageParameterOptions {
  /** What is listed, plural: `plants`. */
  readonly noun: string;
  readonly defaultLimit: number;
  readonly maxLimit: number;
  readonly exampleAfter: bigint;
}

/** The `limit` and `after` query parameters of a paged listing, with their JSON Schemas. */
export function pageParameters(
  schemas: { readonly limit: unknown; readonly after: unknown },
  { noun, defaultLimit, maxLimit, exampleAfter }: PageParameterOptions,
) {
  return {
    limit: {
      name: 'limit',
      in: 'query',
      description: `The maximum number of results to return: 1 to ${maxLimit}, default ${defaultLimit}.`,
      schema: schemas.limit,
    },
    after: {
      name: 'after',
      in: 'query',
      description: `Only ${noun} whose id is greater than this one: pass the last id of the previous page.`,
      schema: schemas.after,
      example: exampleAfter,
    },
  };
}
