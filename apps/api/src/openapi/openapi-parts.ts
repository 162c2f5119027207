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

/**
 * The 403 of an operation that needs `scope` (and `alsoRequires`). One that also refuses for
 * other reasons (`forbiddenWhen`) sends the bearer challenge only for a missing scope: its other
 * refusals are no authentication matter. `examples`: those refusals' messages.
 */
export function forbidden(
  scope: string,
  alsoRequires: readonly string[] = [],
  forbiddenWhen?: string,
  examples: Record<string, ReturnType<typeof errorExample>> = {},
) {
  const scopes = [scope, ...alsoRequires].map((name) => `\`${name}\``);
  const lacks = scopes.length === 1 ? `the ${scopes[0]} scope` : `the ${scopes.join(' or ')} scope`;
  const challenge =
    forbiddenWhen === undefined
      ? ref('headers/WWW-Authenticate')
      : {
          description: 'RFC 6750 bearer challenge with `error="insufficient_scope"`, when a scope is missing.',
          required: false,
          schema: { type: 'string' },
        };
  return {
    description: `The token lacks ${lacks}${forbiddenWhen === undefined ? '' : `, ${forbiddenWhen}`}. \`error\` is 403.`,
    headers: { 'WWW-Authenticate': challenge },
    content: errorContent([ErrorCode.NotAllowed], {
      scope: errorExample(ErrorCode.NotAllowed, missingScopeMessage(scope), 'Missing scope'),
      ...examples,
    }),
  };
}
