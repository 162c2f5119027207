import type { ListPlantsQuery } from '@plant-store/schema';
import DataLoader from 'dataloader';
import type { SqlRunner } from '../sql-runner.js';
import { findPlant, findPlantRows } from './find-plant.js';
import { listPlantPages, type PlantPage } from './list-plants.js';
import { toVersionedPlant, type VersionedPlant } from './plant-record.js';

export interface PlantReaderOptions {
  /** Most reads one statement answers. */
  readonly maxBatchSize: number;
}

export interface PlantReader {
  find(id: bigint): Promise<VersionedPlant | null>;
  list(query: ListPlantsQuery): Promise<PlantPage>;
}

/**
 * Group reads, as group commit is for creates: reads by id that arrive in the same turn of the
 * event loop go to the database as one `WHERE id = ANY (...)` statement, and pages as one
 * LATERAL statement per kind (see listPlantPages), instead of one round trip each. A round trip
 * costs the driver more CPU than the rest of a read (about 80 us on PostgreSQL, measured with
 * the raw-driver ceiling), so under load a read costs a fraction of one. Batching changes no
 * answer: each read's statement starts after the request arrived, so it sees every plant
 * committed before that, as a statement of its own would; a read alone in its turn goes as its
 * own statement, at once. DataLoader (the batching library made for this) gathers them, with
 * its cache off: a read always reads the database.
 */
export function createPlantReader(sql: SqlRunner, { maxBatchSize }: PlantReaderOptions): PlantReader {
  // The next turn, not the next tick: every request whose bytes arrived in this turn of the
  // event loop has asked by then (see the plant writer's schedulePump).
  const batchScheduleFn = (callback: () => void) => setImmediate(callback);
  const byId = new DataLoader<bigint, VersionedPlant | null>(
    async (ids) => {
      const [only] = ids;
      if (ids.length === 1 && only !== undefined) return [await findPlant(sql, only)];
      const rows = await findPlantRows(sql, [...new Set(ids)]);
      return ids.map((id) => {
        const row = rows.get(id);
        return row === undefined ? null : toVersionedPlant(row);
      });
    },
    { cache: false, maxBatchSize, batchScheduleFn },
  );
  const pages = new DataLoader<ListPlantsQuery, PlantPage>((queries) => listPlantPages(sql, queries), {
    cache: false,
    maxBatchSize,
    batchScheduleFn,
  });
  return { find: (id) => byId.load(id), list: (query) => pages.load(query) };
}
