import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestStorage } from '@plant-store/db/testing';

const API_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ENTRY = join(API_ROOT, 'dist', 'index.js');
const SOURCES = join(API_ROOT, 'src');

/**
 * Fails when the build is missing or older than a source file: a process test must run the code
 * under test. turbo's `test` task depends on `build`; run alone, vitest needs `pnpm build` first.
 */
function checkBuildIsCurrent(): void {
  const built = statSync(ENTRY, { throwIfNoEntry: false })?.mtimeMs;
  if (built === undefined) throw new Error(`${ENTRY} is missing: run \`pnpm build\` first (turbo's test task does)`);
  for (const file of readdirSync(SOURCES, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts') || file.endsWith('.test.ts') || file.startsWith('test-support')) continue;
    if (statSync(join(SOURCES, file)).mtimeMs > built) {
      throw new Error(`src/${file} is newer than dist/index.js: run \`pnpm build\` first (turbo's test task does)`);
    }
  }
}

let buildChecked = false;

/**
 * Runs the built service (`dist/index.js`, what `pnpm start` and `pnpm run token` run) in a child
 * process: starting from the build, not through tsx, saves seconds of compiling per process.
 */
export function spawnApi(args: string[], env: Record<string, string>): ChildProcess {
  if (!buildChecked) {
    checkBuildIsCurrent();
    buildChecked = true;
  }
  return spawn(process.execPath, [ENTRY, ...args], {
    cwd: API_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** A finished child's exit code and everything it wrote. */
export async function collect(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  // 'close', not 'exit': the exit can be reported before the last of its output has been read.
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

/** The environment that points a service process at a test storage. */
export function storageEnv(storage: TestStorage): Record<string, string> {
  return { DATA_DIR: storage.dataDir, ...(storage.databaseUrl ? { DATABASE_URL: storage.databaseUrl } : {}) };
}

export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** Everything it wrote so far, stdout and stderr. */
  output(): string;
  /** Its exit code (null when a signal ended it). */
  readonly exited: Promise<number | null>;
  /** Whether the process is still running. */
  alive(): boolean;
  /** SIGKILLs it if it still runs and waits for it to go: for cleanups. */
  kill(): Promise<void>;
}

/** The URL a "listening" log line names, whatever the logger's key for the message. */
function listeningUrl(line: string): string | undefined {
  try {
    const entry = JSON.parse(line) as { message?: unknown; msg?: unknown; url?: unknown };
    const message = entry.message ?? entry.msg;
    return message === 'listening' && typeof entry.url === 'string' ? entry.url : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts the built service (dist/index.js) as a process on an ephemeral port; resolves once it logs that
 * it listens and `ready(output)` holds, rejects if it exits first.
 */
export async function startServiceProcess(
  env: Record<string, string>,
  ready: (output: string) => boolean = () => true,
): Promise<ServiceProcess> {
  const child = spawnApi([], { ...env, PORT: '0' });
  let output = '';
  let url: string | undefined;
  // 'close', not 'exit': the exit can be reported before the last of its output has been read.
  const exited = once(child, 'close').then(([code]) => code as number | null);
  const listening = new Promise<string>((resolve, reject) => {
    const scan = (chunk: Buffer) => {
      const before = output.length;
      output += chunk.toString();
      // Only whole lines: a chunk may end mid-line.
      const start = output.lastIndexOf('\n', before - 1) + 1;
      for (const line of output.slice(start).split('\n').slice(0, -1)) url ??= listeningUrl(line);
      if (url && ready(output)) resolve(url);
    };
    child.stdout?.on('data', scan);
    child.stderr?.on('data', scan);
    void exited.then((code) => reject(new Error(`service exited early (code ${code}): ${output}`)));
  });
  const service: Omit<ServiceProcess, 'url'> = {
    child,
    output: () => output,
    exited,
    alive: () => child.exitCode === null && child.signalCode === null,
    async kill() {
      if (service.alive()) child.kill('SIGKILL');
      await exited;
    },
  };
  try {
    return { ...service, url: await listening };
  } catch (error) {
    await service.kill();
    throw error;
  }
}
