import type { ListPlantsQueryInput, StoredPlant } from '@plant-store/schema';
import type { ClientContext } from './client-context.js';
import { listPlants } from './list-plants.js';

export interface IteratePlantsOptions {
  /** Only plants with exactly this tag. */
  readonly tag?: string;
  /** Plants per request, 1-100; default 20. */
  readonly pageSize?: number;
  /** Start after this id, as a page's `after` does. */
  readonly after?: bigint;
  /** Aborts the walk; the pending `next()` throws a PlantStoreError of kind `aborted`. */
  readonly signal?: AbortSignal;
}

/**
 * Every plant (with `tag`: every plant so tagged) in ascending id order, one page per request,
 * following each answer's `Link: rel="next"` until the last page has none. Pages are fetched as
 * the loop asks for them; each page fetch is retried like `listPlants`. Pages are keyed by id:
 * every plant that exists for the whole walk is returned exactly once. A plant created during
 * the walk is returned only if its id is beyond the cursor (one behind it is not seen), and a
 * plant deleted during the walk may or may not have been returned already.
 */
export async function* iteratePlants(
  context: ClientContext,
  options: IteratePlantsOptions = {},
): AsyncGenerator<StoredPlant, void, undefined> {
  const { tag, pageSize, after, signal } = options;
  let query: ListPlantsQueryInput | null = {
    ...(pageSize === undefined ? {} : { limit: pageSize }),
    ...(tag === undefined ? {} : { tag }),
    ...(after === undefined ? {} : { after }),
  };
  while (query !== null) {
    const page = await listPlants(context, query, signal === undefined ? {} : { signal });
    yield* page.plants;
    query = page.next;
  }
}
