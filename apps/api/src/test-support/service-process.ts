import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const API_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Runs `src/<entry>` in a child process through tsx, as `pnpm start` / `pnpm run token` run the build. */
export function spawnApi(entry: string, args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', `src/${entry}`, ...args], {
    cwd: API_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
 * Starts the service (src/index.ts) as a process on an ephemeral port; resolves once it logs that
 * it listens and `ready(output)` holds, rejects if it exits first.
 */
export async function startServiceProcess(
  env: Record<string, string>,
  ready: (output: string) => boolean = () => true,
): Promise<ServiceProcess> {
  const child = spawnApi('index.ts', [], { ...env, PORT: '0' });
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
