/**
 * The Fastify reference as a process (see fastify-reference-app.ts): on PostgreSQL through a pg
 * pool (each statement named, so prepared once per connection, as the service's are), or on the
 * embedded database (PGlite, one connection, in process) in the folder the service used after it
 * stopped. The token it accepts is REFERENCE_TOKEN. Run as its own process, like the bare HTTP
 * ceiling; it sends `ready` with its port.
 *
 *   fastify-reference.ts --engine postgres --url URL --pool-size N
 *   fastify-reference.ts --engine pglite --data-dir DIR
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { serveForBench } from './ceiling-protocol.js';
import { createFastifyReference, type RunStatement } from './fastify-reference-app.js';

const { values } = parseArgs({
  options: {
    engine: { type: 'string', default: 'postgres' },
    url: { type: 'string' },
    'pool-size': { type: 'string', default: '64' },
    'data-dir': { type: 'string' },
  },
  strict: true,
});
const token = process.env.REFERENCE_TOKEN;
if (token === undefined || token === '') throw new Error('fastify-reference: REFERENCE_TOKEN is required');

async function openDatabase(): Promise<{ run: RunStatement; close: () => Promise<void> }> {
  if (values.engine === 'postgres' && values.url !== undefined) {
    const pool = new pg.Pool({ connectionString: values.url, max: Number(values['pool-size']) });
    return {
      run: async (name, text, params) => (await pool.query({ name, text, values: [...params] })).rows,
      close: () => pool.end(),
    };
  }
  if (values.engine === 'pglite' && values['data-dir'] !== undefined) {
    const { PGlite } = await import('@electric-sql/pglite');
    // The service keeps its database in DATA_DIR/pgdata.
    const db = await PGlite.create(join(values['data-dir'], 'pgdata'));
    return {
      run: async <Row>(_name: string, text: string, params: readonly unknown[]) =>
        (await db.query<Row>(text, [...params])).rows,
      close: () => db.close(),
    };
  }
  throw new Error('usage: --engine postgres --url URL [--pool-size N] | --engine pglite --data-dir DIR');
}

const database = await openDatabase();
const app = createFastifyReference(database.run, token);
await app.ready();
serveForBench(app.server, () => void database.close());
