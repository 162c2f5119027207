import {
  type OperationDeclaration,
  type OperationInput,
  operationParameters,
  type PathParametersOf,
  type SuccessBodyOf,
  stringifyJson,
} from '@plant-store/schema';
import type * as v from 'valibot';
import { type CallOptions, type ClientContext, operationTarget } from './client-context.js';
import { contractViolation, parseAnswer } from './parse-answer.js';
import { parseInput } from './parse-input.js';
import type { PlantStoreError } from './plant-store-error.js';
import { type PlantStoreAnswer, type PlantStoreRequest, type RetryMode, sendRequest } from './send-request.js';

type InputOf<TSchema> = TSchema extends v.GenericSchema ? v.InferInput<TSchema> : never;

/** One call of an operation, as the caller gives it: validated with the declared schemas before anything is sent. */
export interface OperationCall<TOperation extends OperationDeclaration> {
  readonly params: PathParametersOf<TOperation>;
  readonly query?: InputOf<TOperation['query']>;
  readonly body?: InputOf<NonNullable<TOperation['body']>['schema']>;
  readonly retryMode: RetryMode;
  readonly doneByEarlierAttempt?: PlantStoreRequest['doneByEarlierAttempt'];
  /** Headers of the call's own: the preconditions the operation declares (`If-Match`). */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface OperationResult<TOperation extends OperationDeclaration> {
  /** What was sent, as validated (defaults filled in). */
  readonly input: OperationInput<TOperation>;
  /** The success body, validated with the declared schema. */
  readonly output: SuccessBodyOf<TOperation>;
  readonly request: PlantStoreRequest;
  readonly answer: PlantStoreAnswer;
  /** The error for a success answer whose content breaks the contract. */
  violation(problem: string): PlantStoreError;
}

/**
 * Calls `operation` as the contract declares it: path parameters, query and body validated with
 * its schemas (an `invalid-input` error before sending), its method and path, the query in the
 * schema's order, the body written exactly, and the answer checked against its success status
 * and schema.
 */
export async function callOperation<TOperation extends OperationDeclaration>(
  context: ClientContext,
  operation: TOperation,
  call: OperationCall<TOperation>,
  options: CallOptions,
): Promise<OperationResult<TOperation>> {
  const params: Record<string, unknown> = {};
  for (const name of operation.parameters ?? []) {
    const parameter = operationParameters[name];
    if (parameter.in === 'path') {
      params[parameter.name] = parseInput(parameter.schema, (call.params as Record<string, unknown>)[parameter.name]);
    }
  }
  const query = operation.query && parseInput(operation.query, call.query ?? {});
  const body = operation.body && parseInput(operation.body.schema, call.body);
  const target = operationTarget(context, operation, params as PathParametersOf<TOperation>);
  if (query) {
    target.url.search = new URLSearchParams(
      Object.entries(query).map(([name, value]) => [name, String(value)]),
    ).toString();
  }
  const request: PlantStoreRequest = {
    ...target,
    ...(body === undefined ? {} : { body: stringifyJson(body) }),
    ...(call.headers === undefined ? {} : { headers: call.headers }),
    retryMode: call.retryMode,
    ...(call.doneByEarlierAttempt ? { doneByEarlierAttempt: call.doneByEarlierAttempt } : {}),
    signal: options.signal,
  };
  const answer = await sendRequest(context.transport, request);
  const { schema } = operation.success;
  return {
    input: { params, query, body } as OperationInput<TOperation>,
    output: (schema ? parseAnswer(schema, answer, request) : undefined) as SuccessBodyOf<TOperation>,
    request,
    answer,
    violation: (problem) => contractViolation(answer, request, problem),
  };
}
