import { createServer } from 'node:net';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseUnavailableError } from '../errors.js';
import { translateError } from '../prisma-errors.js';
import { createTestStorage, type TestStorage, testEngines, waitUntil } from '../testing.js';
import { isHostLost } from './host-lost.js';
import { type ConnectionEvent, createPostgresPool, NoQualifyingHostError } from './postgres-pool.js';

/** A loopback port nothing listens on (connections are refused at once). */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

describe.skipIf(!testEngines().includes('postgres'))('createPostgresPool on PostgreSQL', () => {
  let storage: TestStorage;
  /** The test database's URL split into what a multi-host URL needs. */
  let server: { user: string; hostAndPort: string; database: string };
  let dead: string;
  const pools: pg.Pool[] = [];
  let events: ConnectionEvent[] = [];

  const open = (hosts: string, query: string, options: Partial<pg.PoolConfig> = {}) => {
    const pool = createPostgresPool(
      `postgres://${server.user}@${hosts}/${server.database}${query}`,
      { max: 2, connectionTimeoutMillis: 2_000, ...options },
      { onConnectionEvent: (event) => events.push(event) },
    );
    pool.on('error', () => {});
    pools.push(pool);
    return pool;
  };
  const summary = () =>
    events.map(
      (event) =>
        `${event.kind}${'host' in event ? ` ${event.host}` : ''}${'reason' in event ? ` ${event.reason}` : ''}`,
    );

  beforeAll(async () => {
    storage = await createTestStorage('postgres');
    const url = new URL(storage.databaseUrl ?? '');
    server = { user: url.username, hostAndPort: url.host, database: url.pathname.slice(1) };
    dead = `127.0.0.1:${await deadPort()}`;
  });
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.end()));
    events = [];
  });
  afterAll(() => storage?.dispose());

  it('passes over a host that refuses connections and keeps the first that qualifies, in order', async () => {
    const pool = open(`${dead},${server.hostAndPort}`, '?target_session_attrs=read-write');
    const { rows } = await pool.query<{ ok: number }>('SELECT 1 AS ok');
    expect(rows).toEqual([{ ok: 1 }]);
    expect(summary()).toEqual([
      `refused ${dead} failed`,
      `opened ${server.hostAndPort}`,
      `primary ${server.hostAndPort}`,
    ]);
    // The refused host comes after the good one for a while: the next connection goes straight there.
    const clients = await Promise.all([pool.connect(), pool.connect()]);
    for (const client of clients) client.release();
    expect(summary().filter((line) => line.startsWith('refused'))).toHaveLength(1);
  });

  it('with read-write, refuses a read-only session (as a standby would be); with primary, takes it', async () => {
    const readOnly = '&options=-c%20default_transaction_read_only%3Don';
    const writer = open(server.hostAndPort, `?target_session_attrs=read-write${readOnly}`);
    const error = await writer.query('SELECT 1').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NoQualifyingHostError);
    expect(error).toMatchObject({ code: '08001' });
    expect(translateError(error)).toBeInstanceOf(DatabaseUnavailableError);
    expect(summary()).toEqual([`refused ${server.hostAndPort} read-only`, 'unavailable']);
    // Right after a pass found nothing, a new connection fails at once, without trying.
    await expect(writer.query('SELECT 1')).rejects.toBeInstanceOf(NoQualifyingHostError);
    expect(summary()).toHaveLength(2);

    events = [];
    const primary = open(server.hostAndPort, `?target_session_attrs=primary${readOnly}`);
    await expect(primary.query('SELECT 1')).resolves.toBeDefined();
    expect(summary()).toEqual([`opened ${server.hostAndPort}`, `primary ${server.hostAndPort}`]);
  });

  it('closes a connection that met a read-only error instead of handing it out again', async () => {
    const pool = open(server.hostAndPort, '?target_session_attrs=read-write', { max: 1 });
    const client = await pool.connect();
    const backend = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
    // The session turns read-only under the pool (as a demoted host's would), and a write fails.
    await client.query('SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY');
    const error = await client.query('CREATE TEMP TABLE t (x int)').catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: '25006' });
    expect(isHostLost(error)).toBe(true);
    // Released as if all were well (as Prisma's adapter does after a rollback).
    client.release();
    expect(summary()).toContain(`discarded ${server.hostAndPort}`);
    const next = await pool.connect();
    try {
      const again = (await next.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      expect(again).not.toBe(backend);
    } finally {
      next.release();
    }
  });

  it('closes a pooled connection whose server ended it (57P01, as a shutting-down primary does)', async () => {
    const pool = open(server.hostAndPort, '?target_session_attrs=read-write', { max: 1 });
    const { rows } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const killer = open(server.hostAndPort, '');
    await killer.query('SELECT pg_terminate_backend($1)', [rows[0]?.pid]);
    // Dropped as soon as the server's FATAL arrives, while idle; the next query gets a new one.
    await waitUntil(() => summary().includes(`discarded ${server.hostAndPort}`));
    expect(pool.totalCount).toBe(0);
    const again = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    expect(again.rows[0]?.pid).not.toBe(rows[0]?.pid);
  });

  it('keeps node-postgres’s plain pool for one host without target_session_attrs, reporting its events', async () => {
    const pool = open(server.hostAndPort, '');
    expect(Object.getPrototypeOf(pool).constructor.name).toBe('BoundPool');
    await pool.query('SELECT 1');
    expect(summary()).toEqual([`opened ${server.hostAndPort}`]);
  });

  it('keeps the server options of the URL and adds the pool’s (one host and several)', async () => {
    const settings = async (pool: pg.Pool) =>
      (
        await pool.query<{ jit: string; timezone: string }>(
          "SELECT current_setting('jit') AS jit, current_setting('TimeZone') AS timezone",
        )
      ).rows[0];
    const query = `?options=${encodeURIComponent('-c TimeZone=Asia/Tokyo')}`;
    expect(await settings(open(server.hostAndPort, query, { options: '-c jit=off' }))).toEqual({
      jit: 'off',
      timezone: 'Asia/Tokyo',
    });
    expect(
      await settings(
        open(`${dead},${server.hostAndPort}`, `${query}&target_session_attrs=read-write`, { options: '-c jit=off' }),
      ),
    ).toEqual({ jit: 'off', timezone: 'Asia/Tokyo' });
    expect((await settings(open(server.hostAndPort, '')))?.jit).toBe('on');
  });

  it('falls back from TLS to plain with sslmode=prefer on a server without TLS, and fails with require', async () => {
    const prefer = open(server.hostAndPort, '?sslmode=prefer');
    await expect(prefer.query('SELECT 1')).resolves.toBeDefined();
    expect(summary()).toEqual([`refused ${server.hostAndPort} failed`, `opened ${server.hostAndPort}`]);
    // require: TLS or nothing (one host, one attempt: node-postgres's own pool and error).
    const require = open(server.hostAndPort, '?sslmode=require');
    await expect(require.query('SELECT 1')).rejects.toThrow('The server does not support SSL connections');
  });
});
