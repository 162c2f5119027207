import { type ListPlantsQueryInput, operations, type StoredPlant } from '@plant-store/schema';
import { callOperation } from './call-operation.js';
import { checkPage } from './check-page.js';
import type { CallOptions, ClientContext } from './client-context.js';
import { type NextPlantsQuery, readNextPage } from './next-page.js';

/** One page of `GET /plants`. */
export interface PlantsPage {
  /** In ascending id order. */
  readonly plants: StoredPlant[];
  /** The query of the next page (pass it to `listPlants`), or null when this page is the last. */
  readonly next: NextPlantsQuery | null;
}

/**
 * `GET /plants`: one page of plants in ascending id order, `limit` (1-100, default 20) at most,
 * only those tagged `tag` when given, starting after the id `after` when given. Retried like every read.
 */
export async function listPlants(
  context: ClientContext,
  query: ListPlantsQueryInput = {},
  options: CallOptions = {},
): Promise<PlantsPage> {
  const result = await callOperation(
    context,
    operations.listPlants,
    { params: {}, query, retryMode: 'idempotent' },
    options,
  );
  const { tag } = result.input.query;
  const plants = checkPage(result, {
    noun: 'plants',
    ...(tag === undefined
      ? {}
      : { misplaced: (plant: StoredPlant) => (plant.tag === tag ? null : `plant ${plant.id} is not tagged "${tag}"`) }),
  });
  return { plants, next: readNextPage(result.answer.headers.get('Link'), result.request.url, result.input.query) };
}
