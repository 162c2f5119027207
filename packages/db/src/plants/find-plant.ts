import type { StoredPlant } from '@plant-store/schema';
import { translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';
import { type PlantRow, toStoredPlant } from './plant-record.js';

/** A plants row as the read statements return it: the id as decimal text (exact on both drivers). */
export interface PlantRowText {
  readonly id: string;
  readonly name: string;
  readonly tag: string | null;
}

export function toPlantRow(row: PlantRowText): PlantRow {
  return { id: BigInt(row.id), name: row.name, tag: row.tag };
}

/** One plant by primary key. */
export const FIND_PLANT_SQL = 'SELECT id::text AS id, name, tag FROM public.plants WHERE id = $1::text::bigint';

/** The plants with these ids (any order), by primary key: judging creates whose insert found a row. */
export const FIND_PLANTS_SQL =
  'SELECT id::text AS id, name, tag FROM public.plants WHERE id = ANY ($1::text[]::bigint[])';

/**
 * The stored plant with this id, or null. Through the driver, not Prisma: the commonest read,
 * and Prisma's query path cost about four times the driver's round trip in CPU (issue 12).
 */
export async function findPlant(sql: SqlRunner, id: bigint): Promise<StoredPlant | null> {
  try {
    const { rows } = await sql.query<PlantRowText>(FIND_PLANT_SQL, [id.toString()]);
    const [row] = rows;
    return row === undefined ? null : toStoredPlant(toPlantRow(row));
  } catch (error) {
    throw translateError(error);
  }
}

/** The stored rows of these ids, keyed by id (ids with no row are absent). */
export async function findPlantRows(sql: SqlRunner, ids: readonly bigint[]): Promise<Map<bigint, PlantRow>> {
  try {
    const { rows } = await sql.query<PlantRowText>(FIND_PLANTS_SQL, [ids.map(String)]);
    return new Map(rows.map((row) => [BigInt(row.id), toPlantRow(row)]));
  } catch (error) {
    throw translateError(error);
  }
}
