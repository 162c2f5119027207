import * as v from 'valibot';
import { int64Schema } from './int64.js';
import { StoredPlantSchema, TAG_MAX_LENGTH, tagSchema } from './plant.js';

/** How many plants one `GET /plants` page holds when the caller does not say. */
export const PLANTS_PAGE_DEFAULT_LIMIT = 20;
/** The most plants one `GET /plants` page may hold. */
export const PLANTS_PAGE_MAX_LIMIT = 100;

/**
 * The `limit` of a paged listing: an integer from 1 to `maxLimit`, `defaultLimit` when absent.
 * Query strings arrive as text; the service reads integers out of them first and hands
 * anything else over as is, for these rules to refuse.
 */
export function pageLimitSchema(defaultLimit: number, maxLimit: number) {
  const message = `limit must be an integer between 1 and ${maxLimit}`;
  return v.optional(
    v.pipe(
      v.number(message),
      v.integer(message),
      v.minValue(1, message),
      v.maxValue(maxLimit, message),
      v.metadata({ format: 'int32' }),
      v.description('The maximum number of results to return'),
    ),
    defaultLimit,
  );
}

/**
 * The query of `GET /plants`, as typed values: `limit` (1-100, default 20), `tag` (exact match)
 * and `after` (an int64 id: the page starts after it). Query strings arrive as text; the service
 * reads integers out of them first and hands anything else over as is, for these rules to refuse.
 */
export const ListPlantsQuerySchema = v.object({
  limit: pageLimitSchema(PLANTS_PAGE_DEFAULT_LIMIT, PLANTS_PAGE_MAX_LIMIT),
  tag: v.exactOptional(tagSchema(`Only plants with exactly this tag (at most ${TAG_MAX_LENGTH} characters)`)),
  after: v.exactOptional(
    int64Schema('after', 'Only plants whose id is greater than this one: the last id of the previous page'),
  ),
});
/** The parsed query: `limit` always set, `tag` and `after` when given. */
export type ListPlantsQuery = v.InferOutput<typeof ListPlantsQuerySchema>;
/** What a caller may pass: every field optional, `after` as bigint (or a safe-integer number). */
export type ListPlantsQueryInput = v.InferInput<typeof ListPlantsQuerySchema>;

/** The body of a `GET /plants` answer: plants in ascending id order. */
export const PlantListSchema = v.array(StoredPlantSchema);
export type PlantList = v.InferOutput<typeof PlantListSchema>;
