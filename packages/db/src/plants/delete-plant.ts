import { translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';

export const DELETE_PLANT_SQL = 'DELETE FROM public.plants WHERE id = $1::text::bigint RETURNING id::text AS id';

/** Deletes the plant with this id; false when there was none. Committed when it resolves. */
export async function deletePlant(sql: SqlRunner, id: bigint): Promise<boolean> {
  try {
    const { rows } = await sql.query<{ id: string }>(DELETE_PLANT_SQL, [id.toString()]);
    return rows.length > 0;
  } catch (error) {
    throw translateError(error);
  }
}
