import { translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';
import { type PlantRow, toVersionedPlant, type VersionedPlant } from './plant-record.js';

/** A plants row as the read statements return it: id and version as decimal text (exact on both drivers). */
export interface PlantRowText {
  readonly id: string;
  readonly name: string;
  readonly tag: string | null;
  readonly version: string;
}

export function toPlantRow(row: PlantRowText): PlantRow {
  return { id: BigInt(row.id), name: row.name, tag: row.tag, version: BigInt(row.version) };
}

/** The columns PlantRowText names, for the statements that read or return plants. */
export const PLANT_ROW_COLUMNS = 'id::text AS id, name, tag, version::text AS version';

/** One plant by primary key. */
export const FIND_PLANT_SQL = `SELECT ${PLANT_ROW_COLUMNS} FROM public.plants WHERE id = $1::text::bigint`;

/** The plants with these ids (any order), by primary key: judging creates whose insert found a row. */
export const FIND_PLANTS_SQL = `SELECT ${PLANT_ROW_COLUMNS} FROM public.plants WHERE id = ANY ($1::text[]::bigint[])`;

/**
 * The stored plant with this id and its version, or null. Through the driver, not Prisma: the
 * commonest read, and Prisma's query path cost about four times the driver's round trip in CPU
 * (issue 12).
 */
export async function findPlant(sql: SqlRunner, id: bigint): Promise<VersionedPlant | null> {
  try {
    const { rows } = await sql.query<PlantRowText>(FIND_PLANT_SQL, [id.toString()]);
    const [row] = rows;
    return row === undefined ? null : toVersionedPlant(toPlantRow(row));
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
