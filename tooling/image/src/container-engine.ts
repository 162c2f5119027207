import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export type EngineName = 'podman' | 'docker';

export interface CommandResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Podman or Docker: the two take the same commands for everything done here. */
export interface ContainerEngine {
  readonly name: EngineName;
  /** Runs `<engine> ...args` and collects its output; never throws for a non-zero exit. */
  run(args: readonly string[], options?: { readonly timeoutMs?: number }): Promise<CommandResult>;
  /** Runs `<engine> ...args` with its output on this process's; rejects unless it exits 0. */
  stream(args: readonly string[]): Promise<void>;
}

export class ImageToolError extends Error {
  override readonly name = 'ImageToolError';
}

/**
 * The engine named by CONTAINER_ENGINE, else Podman if installed, else Docker. Podman runs here
 * (no Docker daemon on these machines); Docker is what most laptops and CI services have.
 */
export async function findContainerEngine(env: NodeJS.ProcessEnv = process.env): Promise<ContainerEngine> {
  const wanted = env.CONTAINER_ENGINE;
  if (wanted !== undefined && wanted !== '' && wanted !== 'podman' && wanted !== 'docker') {
    throw new ImageToolError(`CONTAINER_ENGINE must be podman or docker, not ${wanted}`);
  }
  const candidates: EngineName[] = wanted ? [wanted] : ['podman', 'docker'];
  for (const name of candidates) {
    const engine = containerEngine(name);
    // `docker --version` answers without a daemon: `info` proves the engine can work.
    if ((await engine.run(['info'], { timeoutMs: 30_000 })).code === 0) return engine;
  }
  throw new ImageToolError(
    `no working container engine (tried ${candidates.join(', ')}): install Podman or Docker; on a Debian machine ` +
      'without a Docker daemon, run tooling/image/setup-podman.sh as root',
  );
}

export function containerEngine(name: EngineName): ContainerEngine {
  return {
    name,
    async run(args, options = {}) {
      try {
        const { stdout, stderr } = await execFileAsync(name, [...args], {
          maxBuffer: 64 * 1024 * 1024,
          ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
        });
        return { code: 0, stdout, stderr };
      } catch (error) {
        const failed = error as { code?: unknown; stdout?: string; stderr?: string; message: string };
        return {
          code: typeof failed.code === 'number' ? failed.code : 1,
          stdout: failed.stdout ?? '',
          stderr: failed.stderr ?? failed.message,
        };
      }
    },
    stream(args) {
      return new Promise((resolve, reject) => {
        const child = spawn(name, [...args], { stdio: 'inherit' });
        child.once('error', reject);
        child.once('exit', (code, signal) =>
          code === 0
            ? resolve()
            : reject(new ImageToolError(`${name} ${args[0]} failed (${signal ?? `exit code ${code}`})`)),
        );
      });
    },
  };
}

/** The output of a command that must succeed, trimmed; an ImageToolError naming it otherwise. */
export async function runChecked(
  engine: ContainerEngine,
  args: readonly string[],
  options?: { readonly timeoutMs?: number },
): Promise<string> {
  const result = await engine.run(args, options);
  if (result.code !== 0) {
    throw new ImageToolError(`${engine.name} ${args.join(' ')} failed (exit ${result.code}): ${result.stderr.trim()}`);
  }
  return result.stdout.trim();
}
