import type { StoredPlant } from '@plant-store/schema';
import { DatabaseUnavailableError, PlantConflictError } from '../errors.js';
import { translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';
import { findPlantRows } from './find-plant.js';
import { type InsertedPlants, insertPlants, type PlantInsert } from './insert-plants.js';
import { hasSameContent, toStoredPlant } from './plant-record.js';

export interface CreatePlantResult {
  readonly plant: StoredPlant;
  /** Its version: the new one, or for a replay the stored one. */
  readonly version: bigint;
  /** False when the same plant was already stored: an idempotent replay that changed nothing. */
  readonly created: boolean;
}

/** How often to re-try when the conflicting row vanished (deleted) between insert and read. */
const MAX_ATTEMPTS = 3;

/**
 * Creates a plant, or recognises a replay of one already stored.
 * - New id: inserts it (committed when this resolves) and returns `created: true`.
 * - Same id, same name and tag: returns the stored plant, `created: false`, writes nothing.
 * - Same id, other content: throws PlantConflictError.
 * Under concurrency PostgreSQL's primary key decides: exactly one insert wins, the others
 * see its committed row and answer as a replay or a conflict.
 * The insert is the group-commit statement for one plant (insertPlants), so a plant written
 * this way gets its webhook event in the same transaction too; a replay or a conflict, none.
 * `onEvents` is called once that statement has committed, when it recorded webhook events.
 * The event keeps `plant.traceParent`, when there is one.
 */
export async function createPlant(
  sql: SqlRunner,
  plant: PlantInsert,
  onEvents?: () => void,
): Promise<CreatePlantResult> {
  for (let attempt = 1; ; attempt++) {
    let inserted: InsertedPlants;
    try {
      inserted = await insertPlants(sql, [plant]);
    } catch (error) {
      throw translateError(error);
    }
    if (inserted.events > 0) onEvents?.();
    const version = inserted.versions.get(plant.id);
    if (version !== undefined) {
      return {
        plant: toStoredPlant({ id: plant.id, name: plant.name, tag: plant.tag ?? null }),
        version,
        created: true,
      };
    }
    const existing = (await findPlantRows(sql, [plant.id])).get(plant.id);
    if (existing) {
      if (hasSameContent(existing, plant)) {
        return { plant: toStoredPlant(existing), version: existing.version, created: false };
      }
      throw new PlantConflictError(plant.id);
    }
    if (attempt >= MAX_ATTEMPTS) {
      // Deleted between our insert and our read, again and again: transient, worth a retry.
      throw new DatabaseUnavailableError({ cause: new Error(`plant ${plant.id} kept vanishing while being created`) });
    }
  }
}
