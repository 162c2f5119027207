import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';

const run = promisify(execFile);

/**
 * A PostgreSQL server of the test's own, in a temp folder, that the test may stop, freeze and
 * start again: for outage tests, which must not touch the shared server. Needs the PostgreSQL
 * server binaries (PG_BIN, or the newest /usr/lib/postgresql/<version>/bin). PostgreSQL refuses
 * to run as root, so under root it runs as the `postgres` user.
 */
export interface ThrowawayPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication). */
  readonly url: string;
  /** Starts the server again after stop(); resolves once it accepts connections. */
  start(): Promise<void>;
  /** `pg_ctl stop -m <mode>`: `immediate` is a crash (sockets cut, recovery at the next start). */
  stop(mode: 'fast' | 'immediate'): Promise<void>;
  /** SIGSTOPs every server process: the sockets stay open and nothing answers (a hung host). */
  freeze(): Promise<void>;
  /** SIGCONTs what freeze() stopped. */
  thaw(): Promise<void>;
  /** Stops the server (if running) and removes its folder. */
  dispose(): Promise<void>;
}

function serverBinaries(): string {
  const fromEnv = process.env.PG_BIN;
  if (fromEnv) return fromEnv;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((name) => existsSync(join(root, name, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const newest = versions[0];
  if (newest === undefined) throw new Error(`no PostgreSQL server binaries in ${root}/*/bin; set PG_BIN`);
  return join(root, newest, 'bin');
}

/** Every running throwaway server's stop command: a last resort if a test process exits without cleanup. */
const running = new Map<string, () => void>();
process.once('exit', () => {
  for (const stop of running.values()) stop();
});

export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  const bin = serverBinaries();
  const asRoot = process.getuid?.() === 0;
  const command = (tool: string, args: string[]): [string, string[]] =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]] : [join(bin, tool), args];
  const folder = await mkdtemp(join(tmpdir(), 'plant-store-pg-'));
  const dataDir = join(folder, 'data');
  const logFile = join(folder, 'server.log');
  const port = await freePort();
  const serverOptions = `-c listen_addresses=127.0.0.1 -p ${port} -k ${folder}`;
  const pgCtl = async (args: string[]) => {
    try {
      await run(...command('pg_ctl', ['-D', dataDir, ...args]), { timeout: 30_000 });
    } catch (error) {
      const log = await readFile(logFile, 'utf8').catch(() => '');
      throw new Error(`pg_ctl ${args.join(' ')} failed: ${String(error)}\n${log.slice(-2_000)}`);
    }
  };
  const stopNow = () => {
    try {
      execFileSync(...command('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']), { stdio: 'ignore' });
    } catch {
      // Not running.
    }
  };
  let frozen: number[] = [];
  const signal = (pids: number[], name: NodeJS.Signals) => {
    for (const pid of pids) {
      try {
        process.kill(pid, name);
      } catch {
        // Already gone.
      }
    }
  };

  const postgres: ThrowawayPostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      await pgCtl(['-o', serverOptions, '-l', logFile, '-w', '-t', '20', 'start']);
      running.set(dataDir, stopNow);
    },
    async stop(mode) {
      await pgCtl(['-m', mode, '-w', '-t', '20', 'stop']);
      running.delete(dataDir);
    },
    async freeze() {
      // The postmaster first, so that it forks no backend after its children are listed.
      const postmaster = Number((await readFile(join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
      signal([postmaster], 'SIGSTOP');
      const { stdout } = await run('pgrep', ['-P', String(postmaster)]).catch(() => ({ stdout: '' }));
      const children = stdout.split('\n').filter(Boolean).map(Number);
      signal(children, 'SIGSTOP');
      frozen = [postmaster, ...children];
    },
    async thaw() {
      signal(frozen.splice(0), 'SIGCONT');
    },
    async dispose() {
      await postgres.thaw();
      if (running.has(dataDir)) stopNow();
      running.delete(dataDir);
      await rm(folder, { recursive: true, force: true });
    },
  };

  try {
    if (asRoot) await run('chown', ['postgres:', folder]);
    await run(...command('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync']), {
      timeout: 60_000,
    });
    await postgres.start();
  } catch (error) {
    await postgres.dispose();
    throw error;
  }
  return postgres;
}
