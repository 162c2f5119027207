import type { NewPlant, StoredPlant } from '@plant-store/schema';
import { DatabaseUnavailableError, PlantConflictError } from '../errors.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { isUniqueViolation, translateError } from '../prisma-errors.js';
import { hasSameContent, toStoredPlant } from './plant-record.js';

export interface CreatePlantResult {
  readonly plant: StoredPlant;
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
 */
export async function createPlant(prisma: PrismaClient, plant: NewPlant): Promise<CreatePlantResult> {
  const data = { id: plant.id, name: plant.name, tag: plant.tag ?? null };
  for (let attempt = 1; ; attempt++) {
    try {
      const row = await prisma.plant.create({ data, select: { id: true, name: true, tag: true } });
      return { plant: toStoredPlant(row), created: true };
    } catch (error) {
      if (!isUniqueViolation(error)) throw translateError(error);
    }
    const existing = await prisma.plant
      .findUnique({ where: { id: plant.id }, select: { id: true, name: true, tag: true } })
      .catch((error: unknown) => {
        throw translateError(error);
      });
    if (existing) {
      if (hasSameContent(existing, plant)) return { plant: toStoredPlant(existing), created: false };
      throw new PlantConflictError(plant.id);
    }
    if (attempt >= MAX_ATTEMPTS) {
      // Deleted between our insert and our read, again and again: transient, worth a retry.
      throw new DatabaseUnavailableError({ cause: new Error(`plant ${plant.id} kept vanishing while being created`) });
    }
  }
}
