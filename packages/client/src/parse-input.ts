import * as v from 'valibot';
import { PlantStoreError } from './plant-store-error.js';

/**
 * The caller's input, validated with the contract schema before anything is sent. Refused
 * input throws a PlantStoreError of kind `invalid-input` with `error` 400, as the service
 * would have answered, and with the schema's messages (each names its field).
 */
export function parseInput<const TSchema extends v.GenericSchema>(
  schema: TSchema,
  input: unknown,
): v.InferOutput<TSchema> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  throw new PlantStoreError({
    kind: 'invalid-input',
    status: 0,
    error: 400,
    message: result.issues.map((issue) => issue.message).join('; '),
  });
}
