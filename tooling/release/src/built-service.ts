import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built service's entrypoint (`turbo run build --filter=@plant-store/api` makes it). */
export const API_ENTRYPOINT = fileURLToPath(new URL('../../../apps/api/dist/index.js', import.meta.url));

/** How long the service may take to listen on an empty embedded database (PGlite, migrations). */
const START_WITHIN_MS = 120_000;

export interface BuiltService {
  readonly url: string;
  /** The bearer token it issued on its first start (all scopes), from its stdout banner. */
  readonly token: string;
  /** Stops it (SIGTERM, then SIGKILL) and removes its data folder. */
  stop(): Promise<void>;
}

/**
 * Starts `apps/api/dist/index.js serve` as a process, with default settings: only PORT (0), HOST
 * (loopback) and DATA_DIR (a fresh folder: the embedded database) are set, and none of this
 * process's configuration variables reach it. Resolves once it logs that it listens.
 */
export async function startBuiltService(): Promise<BuiltService> {
  const dataDir = await mkdtemp(join(tmpdir(), 'plant-store-release-'));
  // The `node` running this (the pinned runtime), with the flags of the entrypoint's first line.
  const child = spawn(
    process.execPath,
    ['--max-semi-space-size=16', '--max-old-space-size=192', API_ENTRYPOINT, 'serve'],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? dataDir,
        PORT: '0',
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  const exited = once(child, 'close');
  const stop = async () => {
    await stopProcess(child, exited);
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "listening" within ${START_WITHIN_MS} ms`)), START_WITHIN_MS);
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const listening = stderr.split('\n').slice(0, -1).map(listeningUrl).find(Boolean);
        if (listening) {
          clearTimeout(timer);
          resolve(listening);
        }
      });
      void exited.then(([code]) => {
        clearTimeout(timer);
        reject(new Error(`the service exited (code ${code}) before listening`));
      });
    });
    const token = /^\s*PLANT_STORE_TOKEN=(\S+)$/m.exec(stdout)?.[1];
    if (!token) throw new Error('the service printed no first-run token');
    return { url, token, stop };
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n-- stdout\n${stdout}\n-- stderr\n${stderr}`);
  }
}

/** The URL of a `"message":"listening"` log line, if `line` is one. */
function listeningUrl(line: string): string | undefined {
  try {
    const entry = JSON.parse(line) as { message?: unknown; url?: unknown };
    return entry.message === 'listening' && typeof entry.url === 'string' ? entry.url : undefined;
  } catch {
    return undefined;
  }
}

async function stopProcess(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
