import * as v from 'valibot';
import { invalidRequest } from './api-error.js';

/**
 * `input` against a contract schema: the output, or the message of the first failed rule (the
 * 400's message; not thrown, and no error made: an invalid body is the commonest refusal).
 */
export function checkInput<const TSchema extends v.GenericSchema>(
  schema: TSchema,
  input: unknown,
): { readonly output: v.InferOutput<TSchema> } | { readonly issue: string } {
  const result = v.safeParse(schema, input, { abortEarly: true });
  if (result.success) return { output: result.output };
  const [issue] = result.issues;
  return { issue: issue.message };
}

/** Validates `input` against a contract schema; the first failed rule becomes a thrown 400. */
export function parseInput<const TSchema extends v.GenericSchema>(
  schema: TSchema,
  input: unknown,
): v.InferOutput<TSchema> {
  const checked = checkInput(schema, input);
  if ('issue' in checked) throw invalidRequest(checked.issue);
  return checked.output;
}
