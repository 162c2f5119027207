/**
 * The database ceilings, straight through the driver (pg with a pool of one connection per
 * in-flight statement up to a cap, or PGlite in process), `concurrency` statements in flight at
 * all times, in the database the service just used:
 * - insert: raw single-row INSERTs of a plant-shaped row into a fresh table of the service's shape;
 * - select: the service's own read by id (FIND_PLANT_SQL), of random ids of the bench's read set;
 * - page: the service's own page queries (LIST_PLANTS_SQL, LIST_TAGGED_PLANTS_SQL) with the
 *   parameters the service sends for the bench's random pages.
 * On PostgreSQL the reads are named (prepared) statements, as the service sends them. Run as its
 * own process; the bench sends `measure` messages and reads `measured` answers.
 *
 *   database-ceiling.ts --engine postgres --url URL --pool-cap 64
 *   database-ceiling.ts --engine pglite --data-dir DIR
 */
import { join } from 'node:path';
import { createHistogram } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { FIND_PLANT_SQL, LIST_PLANTS_SQL, LIST_TAGGED_PLANTS_SQL } from '@plant-store/db/statements';
import pg from 'pg';
import { benchPlant, createIdSequence, READ_PAGE_LIMIT, randomPageQuery, randomReadId } from '../bench-plants.js';
import { type Measurement, microsecondsToMs } from '../measurement.js';
import {
  type CeilingKind,
  type DatabaseCeilingReady,
  type Failed,
  isMessage,
  type Measured,
  type MeasureRequest,
} from './ceiling-protocol.js';

/** The service's `plants` table (see packages/db's migrations), under another name. */
const CREATE_TABLE = `
  CREATE TABLE bench_raw_plants (
    id BIGINT NOT NULL PRIMARY KEY,
    name VARCHAR(255) NOT NULL,
    tag VARCHAR(255),
    created_at TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
  );
  CREATE INDEX bench_raw_plants_tag_id_idx ON bench_raw_plants (tag, id);`;
const INSERT = 'INSERT INTO bench_raw_plants (id, name, tag) VALUES ($1, $2, $3)';
const COUNT_SERVICE_PLANTS = `
  SELECT CASE WHEN to_regclass('public.plants') IS NULL THEN NULL
         ELSE (SELECT count(*) FROM plants)::int END AS n`;

/** One statement of a kind, with its parameters (and its prepared statement's name on PostgreSQL). */
interface Statement {
  readonly name: string | undefined;
  readonly text: string;
  readonly values: unknown[];
}

/** The next statement each kind runs: what the service would send for the bench's requests. */
function nextStatement(kind: CeilingKind, nextId: () => bigint): Statement {
  switch (kind) {
    case 'insert': {
      const plant = benchPlant(nextId());
      return { name: undefined, text: INSERT, values: [plant.id.toString(), plant.name, plant.tag] };
    }
    case 'select':
      return { name: 'ceiling_find_plant', text: FIND_PLANT_SQL, values: [randomReadId().toString()] };
    case 'page': {
      // As listPlants sends a page: from `after + 1`, one row more than the page holds.
      const { after, tag } = randomPageQuery();
      const from = (after + 1n).toString();
      return tag === undefined
        ? { name: 'ceiling_list_plants', text: LIST_PLANTS_SQL, values: [from, READ_PAGE_LIMIT + 1] }
        : { name: 'ceiling_list_tagged', text: LIST_TAGGED_PLANTS_SQL, values: [tag, from, READ_PAGE_LIMIT + 1] };
    }
  }
}

type Run = (statement: Statement) => Promise<unknown>;

interface CeilingTarget {
  readonly version: string;
  readonly servicePlants: number | null;
  /** A function able to keep `concurrency` statements in flight, and its connection count. */
  connect(concurrency: number): Promise<{ run: Run; connections: number; release(): Promise<void> }>;
  close(): Promise<void>;
}

const { values } = parseArgs({
  options: {
    engine: { type: 'string' },
    url: { type: 'string' },
    'data-dir': { type: 'string' },
    'pool-cap': { type: 'string', default: '64' },
  },
  strict: true,
});

const target = await openTarget().catch((error: unknown) =>
  failAndExit({ type: 'failed', message: error instanceof Error ? error.message : String(error) }),
);
const nextId = createIdSequence();
const ready: DatabaseCeilingReady = { type: 'ready', version: target.version, servicePlants: target.servicePlants };
process.send?.(ready);

let queue = Promise.resolve();
process.on('message', (message: unknown) => {
  if (!isMessage<MeasureRequest>('measure')(message)) return;
  queue = queue.then(async () => {
    try {
      const connected = await target.connect(message.concurrency);
      try {
        const measurement = await measureStatements(connected.run, message);
        const measured: Measured = { type: 'measured', measurement, connections: connected.connections };
        process.send?.(measured);
      } finally {
        await connected.release();
      }
    } catch (error) {
      const failed: Failed = { type: 'failed', message: String(error) };
      process.send?.(failed);
    }
  });
});

const shutDown = () => {
  void queue.then(() => target.close()).finally(() => process.exit(0));
};
process.once('SIGTERM', shutDown);
process.once('disconnect', shutDown);

/** Exits once the bench has the reason (an IPC send is asynchronous). */
function failAndExit(failed: Failed): Promise<never> {
  return new Promise(() => {
    if (process.send) process.send(failed, () => process.exit(1));
    else process.exit(1);
  });
}

async function openTarget(): Promise<CeilingTarget> {
  if (values.engine === 'postgres' && values.url !== undefined)
    return openPostgres(values.url, Number(values['pool-cap']));
  if (values.engine === 'pglite' && values['data-dir'] !== undefined) return openPGlite(values['data-dir']);
  throw new Error('usage: --engine postgres --url URL [--pool-cap N] | --engine pglite --data-dir DIR');
}

async function openPostgres(url: string, poolCap: number): Promise<CeilingTarget> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const version = (await client.query<{ version: string }>('SELECT version()')).rows[0]?.version ?? 'unknown';
    const servicePlants = (await client.query<{ n: number | null }>(COUNT_SERVICE_PLANTS)).rows[0]?.n ?? null;
    await client.query(CREATE_TABLE);
    return {
      version,
      servicePlants,
      async connect(concurrency) {
        // One connection per statement in flight up to the cap; beyond it they queue in the pool.
        const connections = Math.min(concurrency, poolCap);
        const pool = new pg.Pool({ connectionString: url, max: connections });
        return {
          connections,
          run: ({ name, text, values }) => pool.query(name === undefined ? { text, values } : { name, text, values }),
          release: () => pool.end(),
        };
      },
      close: async () => {},
    };
  } finally {
    await client.end();
  }
}

async function openPGlite(dataDir: string): Promise<CeilingTarget> {
  // Imported here so that the PostgreSQL ceiling runs even where PGlite is not installed.
  const { PGlite } = await import('@electric-sql/pglite').catch((error: unknown) => {
    throw new Error(`@electric-sql/pglite must be a devDependency of @plant-store/api: ${String(error)}`);
  });
  // The service keeps its database in DATA_DIR/pgdata; this opens the same one after it stopped.
  const db = await PGlite.create(join(dataDir, 'pgdata'));
  const version = (await db.query<{ version: string }>('SELECT version()')).rows[0]?.version ?? 'unknown';
  const servicePlants = (await db.query<{ n: number | null }>(COUNT_SERVICE_PLANTS)).rows[0]?.n ?? null;
  await db.exec(CREATE_TABLE);
  return {
    version,
    servicePlants,
    // PGlite is one connection: concurrent queries wait their turn inside it, as in the service.
    connect: async () => ({
      connections: 1,
      run: ({ text, values }) => db.query(text, values),
      release: async () => {},
    }),
    close: () => db.close(),
  };
}

/**
 * Keeps `concurrency` statements of the requested kind in flight: warm-up first, then counts and
 * times those that complete within the measured window. Phases are read from the clock, not from
 * timers: PGlite answers through microtasks only, so a timer would never fire while they run.
 */
async function measureStatements(run: Run, request: MeasureRequest): Promise<Measurement> {
  const latencyUs = createHistogram();
  const windowStart = performance.now() + request.warmupSeconds * 1000;
  const windowEnd = windowStart + request.durationSeconds * 1000;
  let completed = 0;
  let errors = 0;
  let firstError: unknown;
  const worker = async () => {
    for (let started = performance.now(); started < windowEnd; started = performance.now()) {
      try {
        await run(nextStatement(request.kind, nextId));
        const finished = performance.now();
        if (finished >= windowStart && finished < windowEnd) {
          completed += 1;
          latencyUs.record(Math.max(1, Math.round((finished - started) * 1000)));
        }
      } catch (error) {
        if (performance.now() >= windowStart) errors += 1;
        firstError ??= error;
        await sleep(10);
      }
    }
  };
  await Promise.all(Array.from({ length: request.concurrency }, worker));
  if (firstError !== undefined) process.stderr.write(`${request.kind} failed: ${String(firstError)}\n`);
  return {
    perSecond: completed / request.durationSeconds,
    p50Ms: microsecondsToMs(latencyUs, 50),
    p99Ms: microsecondsToMs(latencyUs, 99),
    completed,
    non2xx: 0,
    unexpected: 0,
    errors,
    timeouts: 0,
    statusCodes: {},
    seconds: request.durationSeconds,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
