export { type ErrorBody, ErrorCode, ErrorSchema } from './error.js';
export { INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, int64Schema, isInt64 } from './int64.js';
export { parseJson, stringifyJson } from './json.js';
export {
  type ListPlantsQuery,
  type ListPlantsQueryInput,
  ListPlantsQuerySchema,
  PLANTS_PAGE_DEFAULT_LIMIT,
  PLANTS_PAGE_MAX_LIMIT,
  type PlantList,
  PlantListSchema,
} from './list.js';
export {
  NAME_MAX_LENGTH,
  type NewPlant,
  type NewPlantInput,
  NewPlantSchema,
  type Plant,
  PlantIdSchema,
  PlantSchema,
  type StoredPlant,
  StoredPlantSchema,
  TAG_MAX_LENGTH,
  tagSchema,
} from './plant.js';
