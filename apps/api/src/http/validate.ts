import * as v from 'valibot';
import { invalidRequest } from './api-error.js';

/** Validates `input` against a contract schema; the first failed rule becomes a 400 message. */
export function parseInput<const TSchema extends v.GenericSchema>(
  schema: TSchema,
  input: unknown,
): v.InferOutput<TSchema> {
  const result = v.safeParse(schema, input, { abortEarly: true });
  if (result.success) return result.output;
  const [issue] = result.issues;
  throw invalidRequest(issue.message);
}
