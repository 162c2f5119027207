import { operations, PlantIdSchema, type StoredPlant, StoredPlantSchema } from '@plant-store/schema';
import { type CallOptions, type ClientContext, operationTarget } from './client-context.js';
import { contractViolation, parseAnswer } from './parse-answer.js';
import { parseInput } from './parse-input.js';
import { type PlantStoreRequest, sendRequest } from './send-request.js';

/** `GET /plants/{id}`: the plant; a PlantStoreError with `error` 404 when there is none. */
export async function getPlant(context: ClientContext, id: bigint, options: CallOptions = {}): Promise<StoredPlant> {
  const plantId = parseInput(PlantIdSchema, id);
  const request: PlantStoreRequest = {
    ...operationTarget(context, operations.getPlant, { id: plantId }),
    retryMode: 'idempotent',
    signal: options.signal,
  };
  const answer = await sendRequest(context.transport, request);
  const plant = parseAnswer(StoredPlantSchema, answer, request);
  if (plant.id !== plantId) throw contractViolation(answer, request, `id ${plant.id} is not ${plantId}`);
  return plant;
}
