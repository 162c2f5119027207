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
