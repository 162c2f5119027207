import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { delimiter, dirname } from 'node:path';

/** A process the bench started, with its output going to a log file. */
export interface StartedProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export interface StartOptions {
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly logFile: string;
  /**
   * The program to run: this Node by default (`args` start with a script), or an executable
   * script whose `#!` line runs Node (the service's entrypoint), found through PATH, where this
   * Node's folder comes first: the same runtime either way.
   */
  readonly program?: string;
}

export function startProcess(args: readonly string[], options: StartOptions, ipc = false): StartedProcess {
  const log = openSync(options.logFile, 'w');
  const path = [dirname(process.execPath), options.env.PATH].filter(Boolean).join(delimiter);
  const child = spawn(options.program ?? process.execPath, [...args], {
    cwd: options.cwd,
    env: { ...options.env, PATH: path },
    stdio: ipc ? ['ignore', log, log, 'ipc'] : ['ignore', log, log],
  });
  closeSync(log);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', () => resolve(null));
  });
  if (child.pid === undefined) throw new Error(`could not start ${args.join(' ')}`);
  const pid = child.pid;
  let stopping: Promise<void> | undefined;
  return {
    child,
    pid,
    exited,
    stop(graceMs = 15_000) {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}

/** The next message `started` sends over IPC, if `accept` recognises it; rejects if it exits first. */
export function nextMessage<T>(
  started: StartedProcess,
  accept: (message: unknown) => message is T,
  what: string,
): Promise<T> {
  const { child } = started;
  return new Promise((resolve, reject) => {
    const onMessage = (message: unknown) => {
      stopListening();
      if (accept(message)) resolve(message);
      else reject(new Error(`${what}: unexpected answer ${JSON.stringify(message)}`));
    };
    const onExit = (code: number | null) => {
      stopListening();
      reject(new Error(`${what}: the process exited (code ${code}) before answering`));
    };
    const stopListening = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
    if (child.exitCode !== null || child.signalCode !== null) onExit(child.exitCode);
  });
}
