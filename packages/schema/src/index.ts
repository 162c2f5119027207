export { type ErrorBody, ErrorCode, ErrorSchema } from './error.js';
export { INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, int64Schema, isInt64 } from './int64.js';
export { parseJson, stringifyJson } from './json.js';
export {
  NAME_MAX_LENGTH,
  type NewPlant,
  type NewPlantInput,
  NewPlantSchema,
  type Plant,
  PlantSchema,
  type StoredPlant,
  StoredPlantSchema,
  TAG_MAX_LENGTH,
} from './plant.js';
