import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, openSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './free-port.js';

const run = promisify(execFile);

/** Debian's postgresql-15-auto-failover: `pg_autoctl`, for the PostgreSQL 15 server binaries. */
const PG_AUTOCTL = '/usr/bin/pg_autoctl';
const PG_BIN = '/usr/lib/postgresql/15/bin';

/** Why a cluster cannot be started here, or null when it can. */
export function pgAutoFailoverMissing(): string | null {
  if (!existsSync(PG_AUTOCTL)) {
    return `${PG_AUTOCTL} is not installed (apt-get install postgresql-15-auto-failover)`;
  }
  if (!existsSync(join(PG_BIN, 'pg_ctl'))) return `${PG_BIN}/pg_ctl is missing (PostgreSQL 15's server)`;
  return null;
}

/** A node as the monitor sees it. */
export interface ClusterNode {
  readonly name: string;
  /** `127.0.0.1:<port>`, as DATABASE_URL names it. */
  readonly host: string;
  readonly reportedState: string;
  readonly assignedState: string;
}

/**
 * A pg_auto_failover formation on this machine, from Debian's packages: a monitor, a primary and
 * a synchronous secondary, each a PostgreSQL 15 of its own on a free loopback port with its data
 * in a temp folder, run by `pg_autoctl` as the `postgres` user (PostgreSQL refuses root).
 */
export interface FailoverCluster {
  /** The formation's URL exactly as `pg_autoctl show uri` prints it (no user: set PGUSER=postgres). */
  readonly uri: string;
  /** The database the formation's URL names. */
  readonly database: string;
  nodes(): Promise<ClusterNode[]>;
  /** The node the monitor assigned the primary role (`primary` or `wait_primary`). */
  primary(): Promise<ClusterNode>;
  /** `pg_autoctl perform failover`: a planned switch to the secondary; resolves once the monitor says it is done. */
  performFailover(): Promise<void>;
  /**
   * SIGKILLs the node's `pg_autoctl` keeper and its postmaster (their process group; PostgreSQL's
   * other processes, each in a session of its own, exit when they see the postmaster gone), as
   * when its machine dies; the keeper alone would restart PostgreSQL in place.
   */
  killNode(name: string): Promise<void>;
  /**
   * SIGSTOPs the node's keeper and every PostgreSQL process of it (a machine that hangs: sockets
   * open, no answers).
   */
  freezeNode(name: string): Promise<void>;
  /** SIGCONTs what freezeNode stopped. */
  thawNode(name: string): Promise<void>;
  /** When the monitor (its clock: this machine's) first assigned `state` to the node after `after` (ms since the epoch). */
  assignedAt(name: string, state: string, after: number): Promise<number | undefined>;
  /** Starts a killed node's keeper again (it rejoins as a secondary). */
  restartNode(name: string): Promise<void>;
  /** Resolves once the monitor shows one primary and one secondary, each in that state. */
  waitForHealthy(timeoutMs?: number): Promise<void>;
  /** The last lines of a node's log, for failure messages. */
  log(name: string): Promise<string>;
  /** Stops every process (SIGKILL, then waits for them) and removes the folder. */
  dispose(): Promise<void>;
}

/**
 * The monitor's timings for failing a node that stopped answering (see docs/operations.md): the
 * defaults (health checks every 5 s, unhealthy after 20 s, 30 s for an unreachable primary to
 * demote itself) take about 50 s; these take a few seconds, so that the suite stays short.
 */
const FAST_MONITOR_SETTINGS = {
  'pgautofailover.health_check_period': '1000',
  'pgautofailover.health_check_timeout': '1000',
  'pgautofailover.health_check_max_retries': '1',
  'pgautofailover.health_check_retry_delay': '500',
  'pgautofailover.node_considered_unhealthy_timeout': '3000',
  'pgautofailover.primary_demote_timeout': '3000',
};

/** Every running cluster's process groups: killed if the test process exits without cleanup. */
const runningGroups = new Set<number>();
process.once('exit', () => {
  for (const group of runningGroups) killGroup(group);
});

function killGroup(group: number): void {
  try {
    process.kill(-group, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

function signalPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

/** Whether the process exists and is not a zombie (its parent, PID 1 here, may never reap it). */
async function isRunning(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // `pid (comm) state ...`: the state follows the last parenthesis (comm may hold some).
  return stat !== '' && stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

function signalGroup(keeper: ChildProcess | undefined, signal: NodeJS.Signals): void {
  if (keeper?.pid === undefined) throw new Error('no keeper runs for that node');
  process.kill(-keeper.pid, signal);
}

export async function startFailoverCluster(database = 'plant_store'): Promise<FailoverCluster> {
  const missing = pgAutoFailoverMissing();
  if (missing) throw new Error(missing);
  const folder = await mkdtemp(join(tmpdir(), 'plant-store-ha-'));
  const asRoot = process.getuid?.() === 0;
  const env = [
    `PATH=${PG_BIN}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    `XDG_CONFIG_HOME=${folder}/config`,
    `XDG_DATA_HOME=${folder}/data`,
  ];
  /** A pg_autoctl command line, as the `postgres` user when this process is root. */
  const command = (args: string[]): [string, string[]] =>
    asRoot
      ? ['runuser', ['-u', 'postgres', '--', 'env', ...env, 'pg_autoctl', ...args]]
      : ['env', [...env, 'pg_autoctl', ...args]];
  const autoctl = async (args: string[], timeout = 60_000) => {
    try {
      return (await run(...command(args), { timeout, cwd: folder })).stdout;
    } catch (error) {
      throw new Error(`pg_autoctl ${args.join(' ')} failed: ${String(error)}`);
    }
  };
  const keepers = new Map<string, ChildProcess>();
  /** The PostgreSQL processes freezeNode stopped, by node. */
  const frozen = new Map<string, number[]>();
  /**
   * The PostgreSQL processes the node's postmaster started (none when it is not running: a killed
   * node's postmaster.pid stays behind, and its pid may be another process's by now).
   */
  const postgresChildren = async (name: string): Promise<number[]> => {
    const pidFile = await readFile(join(folder, name, 'postmaster.pid'), 'utf8').catch(() => '');
    const postmaster = pidFile.split('\n')[0] ?? '';
    if (!/^\d+$/.test(postmaster)) return [];
    const comm = await readFile(`/proc/${postmaster}/comm`, 'utf8').catch(() => '');
    if (comm.trim() !== 'postgres' || !(await isRunning(Number(postmaster)))) return [];
    const { stdout } = await run('pgrep', ['-P', postmaster, '-x', 'postgres']).catch(() => ({ stdout: '' }));
    return stdout.split('\n').filter(Boolean).map(Number);
  };
  const startKeeper = (name: string) => {
    const logFd = openSync(join(folder, `${name}.log`), 'a');
    // A process group of its own: SIGKILL to the group is the machine dying.
    const child = spawn(...command(['run', '--pgdata', join(folder, name)]), {
      cwd: folder,
      detached: true,
      stdio: ['ignore', logFd, logFd],
    });
    if (child.pid !== undefined) runningGroups.add(child.pid);
    keepers.set(name, child);
  };

  const ports = { monitor: await freePort(), node1: await freePort(), node2: await freePort() };
  const monitorUrl = `postgres://autoctl_node@127.0.0.1:${ports.monitor}/pg_auto_failover?sslmode=disable`;
  const monitor = new pg.Pool({ connectionString: monitorUrl, max: 1 });
  monitor.on('error', () => {});

  const nodes = async (): Promise<ClusterNode[]> => {
    const { rows } = await monitor.query<{
      nodename: string;
      nodehost: string;
      nodeport: number;
      reportedstate: string;
      goalstate: string;
    }>('SELECT nodename, nodehost, nodeport, reportedstate, goalstate FROM pgautofailover.node ORDER BY nodeid');
    return rows.map((row) => ({
      name: row.nodename,
      host: `${row.nodehost}:${row.nodeport}`,
      reportedState: row.reportedstate,
      assignedState: row.goalstate,
    }));
  };
  const healthy = async () => {
    const states = (await nodes().catch(() => [])).map((node) => `${node.reportedState}/${node.assignedState}`);
    return states.length === 2 && states.includes('primary/primary') && states.includes('secondary/secondary');
  };
  const waitForHealthy = async (timeoutMs = 90_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await healthy())) {
      if (Date.now() > deadline)
        throw new Error(
          `the cluster is not healthy after ${timeoutMs} ms: ${JSON.stringify(await nodes().catch(String))}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };

  const cluster: FailoverCluster = {
    uri: '',
    database,
    nodes,
    async primary() {
      const primary = (await nodes()).find((node) => ['primary', 'wait_primary'].includes(node.assignedState));
      if (!primary) throw new Error(`no primary assigned: ${JSON.stringify(await nodes())}`);
      return primary;
    },
    async performFailover() {
      await autoctl(['perform', 'failover', '--pgdata', join(folder, 'monitor'), '--wait', '60'], 90_000);
    },
    async killNode(name) {
      const keeper = keepers.get(name);
      if (keeper?.pid === undefined) throw new Error(`no keeper runs for ${name}`);
      killGroup(keeper.pid);
      runningGroups.delete(keeper.pid);
      if (keeper.exitCode === null && keeper.signalCode === null)
        await new Promise((resolve) => keeper.once('exit', resolve));
      keepers.delete(name);
    },
    async freezeNode(name) {
      // The postmaster first (it forks no process once stopped), then its children.
      signalGroup(keepers.get(name), 'SIGSTOP');
      const children = await postgresChildren(name);
      frozen.set(name, children);
      for (const pid of children) signalPid(pid, 'SIGSTOP');
    },
    async thawNode(name) {
      for (const pid of frozen.get(name) ?? []) signalPid(pid, 'SIGCONT');
      frozen.delete(name);
      signalGroup(keepers.get(name), 'SIGCONT');
    },
    async assignedAt(name, state, after) {
      const { rows } = await monitor.query<{ at: number }>(
        `SELECT extract(epoch FROM eventtime) * 1000 AS at FROM pgautofailover.event
          WHERE nodename = $1 AND goalstate = $2 AND eventtime > to_timestamp($3 / 1000.0) ORDER BY eventid LIMIT 1`,
        [name, state, after],
      );
      return rows[0] === undefined ? undefined : Number(rows[0].at);
    },
    async restartNode(name) {
      startKeeper(name);
    },
    waitForHealthy,
    async log(name) {
      return (await readFile(join(folder, `${name}.log`), 'utf8').catch(() => '')).slice(-4_000);
    },
    async dispose() {
      await monitor.end().catch(() => {});
      for (const pid of [...frozen.values()].flat()) signalPid(pid, 'SIGCONT');
      frozen.clear();
      // PostgreSQL's processes leave the keeper's group, and most exit when they see the postmaster
      // gone, but not all: the monitor's healthcheck worker does not watch for it (and keeps the
      // monitor's logger alive with it). Each is killed by its pid after its group.
      const children = (await Promise.all([...keepers.keys()].map(postgresChildren))).flat();
      for (const keeper of keepers.values()) {
        if (keeper.pid === undefined) continue;
        signalGroup(keeper, 'SIGCONT');
        killGroup(keeper.pid);
        runningGroups.delete(keeper.pid);
        if (keeper.exitCode === null && keeper.signalCode === null)
          await new Promise((resolve) => keeper.once('exit', resolve));
      }
      keepers.clear();
      for (const pid of children) signalPid(pid, 'SIGKILL');
      await waitUntilAsync(async () => !(await Promise.all(children.map(isRunning))).includes(true), 10_000);
      // A killed group's PostgreSQL may take a moment to release its files.
      await rm(folder, { recursive: true, force: true, maxRetries: 5 });
    },
  };

  try {
    if (asRoot) await run('chown', ['postgres:', folder]);
    await autoctl([
      'create',
      'monitor',
      '--pgdata',
      join(folder, 'monitor'),
      '--pgport',
      String(ports.monitor),
      '--auth',
      'trust',
      '--no-ssl',
      '--hostname',
      '127.0.0.1',
    ]);
    // Loopback only (the monitor's own default is every address).
    await autoctl(['config', 'set', '--pgdata', join(folder, 'monitor'), 'postgresql.listen_addresses', '127.0.0.1']);
    startKeeper('monitor');
    await waitUntilAsync(
      async () =>
        await monitor.query('SELECT 1').then(
          () => true,
          () => false,
        ),
      30_000,
    );
    const superuser = new pg.Client({
      connectionString: `postgres://postgres@127.0.0.1:${ports.monitor}/pg_auto_failover`,
    });
    await superuser.connect();
    try {
      for (const [name, value] of Object.entries(FAST_MONITOR_SETTINGS)) {
        await superuser.query(`ALTER SYSTEM SET ${name} = '${value}'`);
      }
      await superuser.query('SELECT pg_reload_conf()');
    } finally {
      await superuser.end();
    }
    for (const name of ['node1', 'node2'] as const) {
      await autoctl([
        'create',
        'postgres',
        '--pgdata',
        join(folder, name),
        '--pgport',
        String(ports[name]),
        '--name',
        name,
        '--dbname',
        database,
        '--auth',
        'trust',
        '--no-ssl',
        '--hostname',
        '127.0.0.1',
        '--listen',
        '127.0.0.1',
        '--monitor',
        monitorUrl,
      ]);
      startKeeper(name);
      // The first node becomes primary before the second joins (else both race for it).
      if (name === 'node1') {
        await waitUntilAsync(
          async () => (await nodes().catch(() => [])).some((n) => n.reportedState === 'single'),
          60_000,
        );
      }
    }
    await waitForHealthy();
    const uri = (await autoctl(['show', 'uri', '--formation', 'default', '--pgdata', join(folder, 'monitor')])).trim();
    return { ...cluster, uri };
  } catch (error) {
    const logs = await Promise.all(
      ['monitor', 'node1', 'node2'].map(async (name) => `${name}:\n${await cluster.log(name)}`),
    );
    await cluster.dispose();
    throw new Error(`${String(error)}\n${logs.join('\n')}`, { cause: error });
  }
}

/** Asks `check` every 100 ms until it holds; fails after `timeoutMs`. */
async function waitUntilAsync(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
