import { join } from 'node:path';
import {
  type Failed,
  type HttpCeilingReady,
  type InsertCeilingReady,
  isMessage,
  type Measured,
  type MeasureRequest,
} from './ceilings/ceiling-protocol.js';
import { nextMessage, type StartedProcess, startProcess } from './started-process.js';

interface CeilingOptions {
  readonly apiRoot: string;
  readonly env: Readonly<Record<string, string>>;
  readonly logFile: string;
}

/** Ceilings are TypeScript run through tsx (apps/api's dev dependency), each in its own process. */
function startCeiling(script: string, args: readonly string[], options: CeilingOptions): StartedProcess {
  return startProcess(
    ['--import', 'tsx', join(options.apiRoot, 'bench/ceilings', script), ...args],
    {
      cwd: options.apiRoot,
      env: options.env,
      logFile: options.logFile,
    },
    true,
  );
}

export interface HttpCeiling extends StartedProcess {
  readonly url: string;
}

/** The bare node:http server (see ceilings/http-ceiling.ts), listening. */
export async function startHttpCeiling(options: CeilingOptions): Promise<HttpCeiling> {
  const started = startCeiling('http-ceiling.ts', [], options);
  try {
    const ready = await nextMessage(started, isMessage<HttpCeilingReady>('ready'), 'the HTTP ceiling');
    return { ...started, url: `http://127.0.0.1:${ready.port}` };
  } catch (error) {
    await started.stop();
    throw error;
  }
}

export interface InsertCeiling extends StartedProcess {
  readonly ready: InsertCeilingReady;
  measure(concurrency: number, warmupSeconds: number, durationSeconds: number): Promise<Measured>;
}

export type InsertCeilingTarget =
  | { readonly engine: 'postgres'; readonly url: string; readonly poolCap: number }
  | { readonly engine: 'pglite'; readonly dataDir: string };

/** The raw INSERT loop (see ceilings/insert-ceiling.ts), its table created. */
export async function startInsertCeiling(target: InsertCeilingTarget, options: CeilingOptions): Promise<InsertCeiling> {
  const args =
    target.engine === 'postgres'
      ? ['--engine', 'postgres', '--url', target.url, '--pool-cap', String(target.poolCap)]
      : ['--engine', 'pglite', '--data-dir', target.dataDir];
  const started = startCeiling('insert-ceiling.ts', args, options);
  let answer: InsertCeilingReady | Failed;
  try {
    answer = await nextMessage(started, isReadyOrFailed, `the ${target.engine} insert ceiling`);
  } catch (error) {
    await started.stop();
    throw new Error(`${String(error)} (log: ${options.logFile})`);
  }
  if (answer.type === 'failed') {
    await started.stop();
    throw new Error(`the ${target.engine} insert ceiling could not start: ${answer.message}`);
  }
  const ready = answer;
  return {
    ...started,
    ready,
    async measure(concurrency, warmupSeconds, durationSeconds) {
      const answer = nextMessage(
        started,
        (message): message is Measured | Failed =>
          isMessage<Measured>('measured')(message) || isMessage<Failed>('failed')(message),
        `the ${target.engine} insert ceiling`,
      );
      const request: MeasureRequest = { type: 'measure', concurrency, warmupSeconds, durationSeconds };
      started.child.send(request);
      const result = await answer;
      if (result.type === 'failed') throw new Error(`the ${target.engine} insert ceiling failed: ${result.message}`);
      return result;
    },
  };
}

function isReadyOrFailed(message: unknown): message is InsertCeilingReady | Failed {
  return isMessage<InsertCeilingReady>('ready')(message) || isMessage<Failed>('failed')(message);
}
