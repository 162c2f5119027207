import * as v from 'valibot';
import { type ApiError, invalidRequest } from './api-error.js';

/** `input` against a contract schema: the output, or the 400 for the first failed rule (not thrown). */
export function checkInput<const TSchema extends v.GenericSchema>(
  schema: TSchema,
  input: unknown,
): { readonly output: v.InferOutput<TSchema> } | { readonly error: ApiError } {
  const result = v.safeParse(schema, input, { abortEarly: true });
  if (result.success) return { output: result.output };
  const [issue] = result.issues;
  return { error: invalidRequest(issue.message) };
}

/** Validates `input` against a contract schema; the first failed rule becomes a thrown 400. */
export function parseInput<const TSchema extends v.GenericSchema>(
  schema: TSchema,
  input: unknown,
): v.InferOutput<TSchema> {
  const checked = checkInput(schema, input);
  if ('error' in checked) throw checked.error;
  return checked.output;
}
