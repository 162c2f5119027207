import {
  type ListPlantsQueryInput,
  ListPlantsQuerySchema,
  operations,
  PlantListSchema,
  type StoredPlant,
} from '@plant-store/schema';
import { type CallOptions, type ClientContext, operationTarget } from './client-context.js';
import { fetchPage } from './fetch-page.js';
import { type NextPlantsQuery, readNextPage } from './next-page.js';
import { parseInput } from './parse-input.js';

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
  const target = operationTarget(context, operations.listPlants, {});
  const { tag } = parsed;
  const { items, link } = await fetchPage(
    context,
    {
      target,
      schema: PlantListSchema,
      query: parsed,
      noun: 'plants',
      ...(tag === undefined
        ? {}
        : {
            filters: { tag },
            misplaced: (plant: StoredPlant) => (plant.tag === tag ? null : `plant ${plant.id} is not tagged "${tag}"`),
          }),
    },
    options,
  );
  return { plants: items, next: readNextPage(link, target.url, parsed) };
}
