/**
 * The hot statements' SQL texts, for benchmarks that measure the raw driver or a hand-written
 * reference beside the service (`@plant-store/db/statements`): the very statements the
 * repository sends, never a copy.
 */
export { LIST_EVENTS_SQL, LIST_TYPED_EVENTS_SQL } from './events/list-events.js';
export { FIND_PLANT_SQL } from './plants/find-plant.js';
export { INSERT_PLANTS_SQL } from './plants/insert-plants.js';
export { LIST_PLANTS_SQL, LIST_TAGGED_PLANTS_SQL } from './plants/list-plants.js';
export { UPDATE_PLANTS_SQL } from './plants/update-plants.js';
