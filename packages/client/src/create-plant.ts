import {
  type NewPlantInput,
  NewPlantSchema,
  operations,
  type StoredPlant,
  StoredPlantSchema,
  stringifyJson,
} from '@plant-store/schema';
import { type CallOptions, type ClientContext, operationTarget } from './client-context.js';
import { contractViolation, parseAnswer } from './parse-answer.js';
import { parseInput } from './parse-input.js';
import { type PlantStoreRequest, sendRequest } from './send-request.js';

/**
 * `POST /plants`: stores the plant and returns it as stored. Retried like a read: the service
 * answers the same id with the same name and tag again with 200 and changes nothing, so a
 * create whose answer was lost is safe to send again.
 */
export async function createPlant(
  context: ClientContext,
  plant: NewPlantInput,
  options: CallOptions = {},
): Promise<StoredPlant> {
  const newPlant = parseInput(NewPlantSchema, plant);
  const request: PlantStoreRequest = {
    ...operationTarget(context, operations.createPlant, {}),
    body: stringifyJson(newPlant),
    retryMode: 'idempotent',
    signal: options.signal,
  };
  const answer = await sendRequest(context.transport, request);
  const stored = parseAnswer(StoredPlantSchema, answer, request);
  if (stored.id !== newPlant.id) throw contractViolation(answer, request, `id ${stored.id} is not ${newPlant.id}`);
  return stored;
}
