/**
 * The reference: the smallest service the fixed stack makes of the same three requests, to show
 * what Koa, @koa/router, koa-bodyparser and pg alone reach on this machine beside the ceilings.
 * One statement per request and nothing else: a fixed-string compare of the bearer token
 * (REFERENCE_TOKEN; a 401 for any other), no rate limit, no access line, no metrics, no request id,
 * no batching. It keeps what
 * the contract needs of the bytes: ids exact (the schema's JSON codec) and a 400 for an empty name.
 * - `POST /plants`: a single-row INSERT into a table of its own (the service's row check counts
 *   `plants`), or a 400 without touching the database;
 * - `GET /plants/:id`: the service's own read by id (FIND_PLANT_SQL, prepared), on its plants.
 * Run as its own process, like the bare HTTP ceiling; it sends `ready` with its port.
 *
 *   koa-reference.ts --url URL --pool-size N
 */

import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import Router from '@koa/router';
import { FIND_PLANT_SQL } from '@plant-store/db/statements';
import { parseJson, stringifyJson } from '@plant-store/schema';
import Koa from 'koa';
import bodyParser from 'koa-bodyparser';
import pg from 'pg';
import { serveForBench } from './ceiling-protocol.js';

const CREATE_TABLE = `
  CREATE TABLE IF NOT EXISTS bench_reference_plants (
    id BIGINT NOT NULL PRIMARY KEY,
    name VARCHAR(255) NOT NULL,
    tag VARCHAR(255),
    created_at TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
  )`;
const INSERT = 'INSERT INTO bench_reference_plants (id, name, tag) VALUES ($1, $2, $3)';

const { values } = parseArgs({ options: { url: { type: 'string' }, 'pool-size': { type: 'string' } } });
if (values.url === undefined) throw new Error('koa-reference: --url is required');
const token = process.env.REFERENCE_TOKEN;
if (token === undefined || token === '') throw new Error('koa-reference: REFERENCE_TOKEN is required');
const AUTHORIZATION = `Bearer ${token}`;
const pool = new pg.Pool({ connectionString: values.url, max: Number(values['pool-size'] ?? 64) });
await pool.query(CREATE_TABLE);

interface PlantText {
  readonly id: string;
  readonly name: string;
  readonly tag: string | null;
}

function answer(ctx: Koa.Context, status: number, json: string): void {
  ctx.status = status;
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = json;
}

const router = new Router();
router.post(
  '/plants',
  bodyParser({ enableTypes: ['text'], extendTypes: { text: ['application/json'] } }),
  async (ctx) => {
    const body = parseJson(String(ctx.request.body)) as { id?: unknown; name?: unknown; tag?: unknown };
    const { id, name, tag = null } = body;
    if (
      typeof id !== 'bigint' ||
      typeof name !== 'string' ||
      name === '' ||
      (tag !== null && typeof tag !== 'string')
    ) {
      return answer(ctx, 400, '{"error":400,"message":"id must be an integer and name a non-empty string"}');
    }
    await pool.query(INSERT, [id.toString(), name, tag]);
    answer(ctx, 200, stringifyJson({ id, name, tag }));
  },
);
router.get('/plants/:id', async (ctx) => {
  const { rows } = await pool.query<PlantText>({ name: 'find_plant', text: FIND_PLANT_SQL, values: [ctx.params.id] });
  const [row] = rows;
  if (row === undefined) return answer(ctx, 404, '{"error":404,"message":"no such plant"}');
  answer(ctx, 200, stringifyJson({ id: BigInt(row.id), name: row.name, tag: row.tag }));
});

const app = new Koa();
// Before the body is read, as the service authenticates.
app.use(async (ctx, next) => {
  if (ctx.get('authorization') !== AUTHORIZATION) {
    return answer(ctx, 401, '{"error":401,"message":"a valid bearer token is required"}');
  }
  await next();
});
app.use(router.routes());
serveForBench(createServer(app.callback()), () => void pool.end());
