import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseUnavailableError } from '../errors.js';
import type { SqlRunner } from '../sql-runner.js';
import { openTestClient, type TestClient } from '../test-support/open-test-client.js';
import { createTestStorage, type TestStorage, testEngines } from '../testing.js';
import { FIND_PLANT_SQL, FIND_PLANTS_SQL } from './find-plant.js';
import { LIST_PLANTS_SQL, listPlants } from './list-plants.js';
import { createPlantReader, type PlantReader } from './plant-reader.js';

const MAX_INT64 = 2n ** 63n - 1n;
const MIN_INT64 = -(2n ** 63n);

describe.each(testEngines())('group reads on %s', (engine) => {
  let storage: TestStorage;
  let client: TestClient;
  let reader: PlantReader;
  /** Every statement the reader sent. */
  const sent: string[] = [];

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    client = await openTestClient(storage);
    await client.rows(
      `INSERT INTO plants (id, name, tag)
       SELECT i, 'plant ' || i, CASE WHEN i % 2 = 0 THEN 'even' END FROM generate_series(1, 100) AS i`,
    );
    await client.rows(`INSERT INTO plants (id, name) VALUES (${MAX_INT64}, 'largest'), (${MIN_INT64}, 'smallest')`);
    const recording: SqlRunner = {
      query(text, values) {
        sent.push(text);
        return client.sql.query(text, values);
      },
    };
    reader = createPlantReader(recording, { maxBatchSize: 256 });
  });
  afterAll(async () => {
    await client?.close();
    await storage?.dispose();
  });

  it('reads a lone plant with the single statement', async () => {
    sent.length = 0;
    expect((await reader.find(7n))?.plant).toEqual({ id: 7n, name: 'plant 7' });
    expect(sent).toEqual([FIND_PLANT_SQL]);
  });

  it('answers reads by id asked in one turn with one statement, each as alone, ids exact', async () => {
    sent.length = 0;
    const ids = [4n, 999n, MAX_INT64, 4n, MIN_INT64, 1n];
    expect((await Promise.all(ids.map((id) => reader.find(id)))).map((found) => found?.plant ?? null)).toEqual([
      { id: 4n, name: 'plant 4', tag: 'even' },
      null,
      { id: MAX_INT64, name: 'largest' },
      { id: 4n, name: 'plant 4', tag: 'even' },
      { id: MIN_INT64, name: 'smallest' },
      { id: 1n, name: 'plant 1' },
    ]);
    expect(sent).toEqual([FIND_PLANTS_SQL]);
  });

  it('answers pages asked in one turn with one statement per kind, each as listPlants answers it', async () => {
    const queries = [
      { limit: 3 },
      { limit: 3, after: 10n },
      { limit: 5, tag: 'even' },
      { limit: 2, tag: 'even', after: 50n },
      { limit: 2, tag: 'none' },
      { limit: 20, after: MAX_INT64 },
    ];
    const alone = [];
    for (const query of queries) alone.push(await listPlants(client.sql, query));
    sent.length = 0;
    expect(await Promise.all(queries.map((query) => reader.list(query)))).toEqual(alone);
    expect(sent).toHaveLength(2);
    expect(sent).not.toContain(LIST_PLANTS_SQL);
  });

  it('reads again whenever asked: nothing is cached', async () => {
    expect(await reader.find(200n)).toBeNull();
    await client.rows(`INSERT INTO plants (id, name) VALUES (200, 'late')`);
    expect((await reader.find(200n))?.plant).toEqual({ id: 200n, name: 'late' });
  });
});

describe('group reads when the database is out of reach', () => {
  it('fails every read of the batch with DatabaseUnavailableError', async () => {
    const refused: SqlRunner = {
      query: async () => {
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      },
    };
    const reader = createPlantReader(refused, { maxBatchSize: 256 });
    const reads = [reader.find(1n), reader.find(2n), reader.list({ limit: 5 }), reader.list({ limit: 5, tag: 'x' })];
    for (const read of reads) await expect(read).rejects.toBeInstanceOf(DatabaseUnavailableError);
  });
});
