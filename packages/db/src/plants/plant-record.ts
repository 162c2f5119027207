import type { StoredPlant } from '@plant-store/schema';

/** The columns of a plants row that make up the wire record. */
export interface PlantRow {
  readonly id: bigint;
  readonly name: string;
  readonly tag: string | null;
}

/** A database row as the plain record the contract speaks of: `tag` absent, never null. */
export function toStoredPlant(row: PlantRow): StoredPlant {
  return row.tag === null ? { id: row.id, name: row.name } : { id: row.id, name: row.name, tag: row.tag };
}

/** Whether a stored row holds exactly this plant's content (a replay) or something else (a conflict). */
export function hasSameContent(row: PlantRow, plant: StoredPlant): boolean {
  return row.name === plant.name && row.tag === (plant.tag ?? null);
}
