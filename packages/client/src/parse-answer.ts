import * as v from 'valibot';
import { PlantStoreError } from './plant-store-error.js';
import { describeRequest, type PlantStoreAnswer, type PlantStoreRequest } from './send-request.js';

/** The answer's body, validated with the contract schema; a body that breaks it throws `invalid-response`. */
export function parseAnswer<const TSchema extends v.GenericSchema>(
  schema: TSchema,
  answer: PlantStoreAnswer,
  request: PlantStoreRequest,
): v.InferOutput<TSchema> {
  const result = v.safeParse(schema, answer.body);
  if (result.success) return result.output;
  const problems = result.issues.map((issue) => {
    const path = v.getDotPath(issue);
    return path === null ? issue.message : `${path}: ${issue.message}`;
  });
  throw contractViolation(answer, request, problems.join('; '));
}

/** An answer with the success status whose content breaks the contract. */
export function contractViolation(
  answer: PlantStoreAnswer,
  request: PlantStoreRequest,
  problem: string,
): PlantStoreError {
  return new PlantStoreError({
    kind: 'invalid-response',
    status: answer.status,
    error: 0,
    message: `${describeRequest(request)} answered ${answer.status} with a body that breaks the contract: ${problem}`,
  });
}
