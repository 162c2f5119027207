import {
  type ListPlantsQueryInput,
  ListPlantsQuerySchema,
  PlantListSchema,
  type StoredPlant,
} from '@plant-store/schema';
import { type CallOptions, type ClientContext, plantsUrl } from './client-context.js';
import { type NextPlantsQuery, readNextPage } from './next-page.js';
import { contractViolation, parseAnswer } from './parse-answer.js';
import { parseInput } from './parse-input.js';
import { type PlantStoreRequest, sendRequest } from './send-request.js';

/** One page of `GET /plants`. */
export interface PlantsPage {
  /** In ascending id order. */
  readonly plants: StoredPlant[];
  /** The query of the next page (pass it to `listPlants`), or null when this page is the last. */
  readonly next: NextPlantsQuery | null;
}

/**
 * `GET /plants`: one page of plants in ascending id order, `limit` (1-100, default 20) at most,
 * only those tagged `tag` when given, starting after the id `after` when given.
 */
export async function listPlants(
  context: ClientContext,
  query: ListPlantsQueryInput = {},
  options: CallOptions = {},
): Promise<PlantsPage> {
  const parsed = parseInput(ListPlantsQuerySchema, query);
  const url = plantsUrl(context);
  url.search = new URLSearchParams({
    limit: String(parsed.limit),
    ...(parsed.tag === undefined ? {} : { tag: parsed.tag }),
    ...(parsed.after === undefined ? {} : { after: String(parsed.after) }),
  }).toString();
  const request: PlantStoreRequest = {
    method: 'GET',
    url,
    successStatus: 200,
    retryMode: 'idempotent',
    signal: options.signal,
  };
  const answer = await sendRequest(context.transport, request);
  const plants = parseAnswer(PlantListSchema, answer, request);

  // What the iterator relies on to visit every plant once: checked, not assumed.
  if (plants.length > parsed.limit) {
    throw contractViolation(answer, request, `${plants.length} plants, more than limit ${parsed.limit}`);
  }
  let previous = parsed.after;
  for (const plant of plants) {
    if (previous !== undefined && plant.id <= previous) {
      throw contractViolation(answer, request, `id ${plant.id} does not come after ${previous}`);
    }
    if (parsed.tag !== undefined && plant.tag !== parsed.tag) {
      throw contractViolation(answer, request, `plant ${plant.id} is not tagged "${parsed.tag}"`);
    }
    previous = plant.id;
  }
  return { plants, next: readNextPage(answer.headers.get('Link'), url, parsed) };
}
