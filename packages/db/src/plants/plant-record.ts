import type { StoredPlant } from '@plant-store/schema';

/** The columns of a plants row that make up the wire record, and its version (the ETag). */
export interface PlantRow {
  readonly id: bigint;
  readonly name: string;
  readonly tag: string | null;
  readonly version: bigint;
}

/** A plant as the contract answers it, with its version: what an answer's ETag carries. */
export interface VersionedPlant {
  readonly plant: StoredPlant;
  readonly version: bigint;
}

export function toVersionedPlant(row: PlantRow): VersionedPlant {
  return { plant: toStoredPlant(row), version: row.version };
}

/** A database row as the plain record the contract speaks of: `tag` absent, never null. */
export function toStoredPlant(row: Omit<PlantRow, 'version'>): StoredPlant {
  return row.tag === null ? { id: row.id, name: row.name } : { id: row.id, name: row.name, tag: row.tag };
}

/** Whether a stored row holds exactly this plant's content (a replay) or something else (a conflict). */
export function hasSameContent(row: PlantRow, plant: StoredPlant): boolean {
  return row.name === plant.name && row.tag === (plant.tag ?? null);
}
