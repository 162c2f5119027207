/**
 * The hot statements' SQL texts, for benchmarks that measure the raw driver beside the service
 * (`@plant-store/db/statements`): the very statements the repository sends, never a copy.
 */
export { FIND_PLANT_SQL } from './plants/find-plant.js';
export { INSERT_PLANTS_SQL } from './plants/insert-plants.js';
export { LIST_PLANTS_SQL, LIST_TAGGED_PLANTS_SQL } from './plants/list-plants.js';
