/** What the bench entry points (`run.ts`, `webhooks.ts`) share: undo steps, the commit, the run. */
import { execFileSync } from 'node:child_process';

/** Undo steps (stop processes, drop the database, delete folders), run in reverse, also on Ctrl-C. */
export class Cleanups {
  private readonly steps: Array<{ readonly name: string; readonly run: () => Promise<void> }> = [];

  /** Registers `run`; the returned function runs it now (once) and unregisters it. */
  add(name: string, run: () => Promise<void>): () => Promise<void> {
    const step = { name, run };
    this.steps.push(step);
    return async () => {
      const index = this.steps.indexOf(step);
      if (index === -1) return;
      this.steps.splice(index, 1);
      await run();
    };
  }

  async runAll(): Promise<void> {
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step.run();
      } catch (error) {
        process.stderr.write(`cleanup "${step.name}" failed: ${String(error)}\n`);
      }
    }
  }
}

/** The commit measured, `+dirty` when tracked files had uncommitted changes (they were built too). */
export function gitCommit(cwd: string): string | null {
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
    return `${git('rev-parse', 'HEAD')}${dirty ? '+dirty' : ''}`;
  } catch {
    return null;
  }
}

/**
 * Runs a bench's `main` as the process: its result is the exit code; Ctrl-C (or SIGTERM) and a
 * crash run the undo steps first, so no service, database or folder is left behind.
 */
export function runBench(name: string, main: () => Promise<number>, cleanups: Cleanups): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: cleaning up\n`);
      void cleanups.runAll().finally(() => process.exit(130));
    });
  }
  main().then(
    (code) => {
      process.exitCode = code;
    },
    async (error: unknown) => {
      await cleanups.runAll();
      process.stderr.write(
        `${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exitCode = 1;
    },
  );
}
