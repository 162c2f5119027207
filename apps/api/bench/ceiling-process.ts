import { join } from 'node:path';
import {
  type CeilingKind,
  type DatabaseCeilingReady,
  type Failed,
  type HttpCeilingReady,
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
export function startHttpCeiling(options: CeilingOptions): Promise<HttpCeiling> {
  return startHttpServer('http-ceiling.ts', [], 'the HTTP ceiling', options);
}

/**
 * The reference (see ceilings/koa-reference.ts): the fixed stack alone, one statement a request,
 * on the PostgreSQL database at `url` with a pool of `poolSize` connections; listening.
 */
export function startKoaReference(
  url: string,
  poolSize: number,
  token: string,
  options: CeilingOptions,
): Promise<HttpCeiling> {
  return startHttpServer('koa-reference.ts', ['--url', url, '--pool-size', String(poolSize)], 'the Koa reference', {
    ...options,
    env: { ...options.env, REFERENCE_TOKEN: token },
  });
}

/** Where the Fastify reference's database is: the one the service used on this engine. */
export type ReferenceDatabase =
  | { readonly engine: 'postgres'; readonly url: string; readonly poolSize: number }
  | { readonly engine: 'pglite'; readonly dataDir: string };

/**
 * The hand-tuned Fastify reference (see ceilings/fastify-reference-app.ts): Fastify 5, Ajv and
 * fast-json-stringify on the service's own statements, accepting `token` only; listening.
 */
export function startFastifyReference(
  database: ReferenceDatabase,
  token: string,
  options: CeilingOptions,
): Promise<HttpCeiling> {
  const args =
    database.engine === 'postgres'
      ? ['--engine', 'postgres', '--url', database.url, '--pool-size', String(database.poolSize)]
      : ['--engine', 'pglite', '--data-dir', database.dataDir];
  return startHttpServer('fastify-reference.ts', args, `the ${database.engine} Fastify reference`, {
    ...options,
    env: { ...options.env, REFERENCE_TOKEN: token },
  });
}

/** A server process that answers the bench's requests (see serveForBench), once it listens. */
async function startHttpServer(
  script: string,
  args: readonly string[],
  name: string,
  options: CeilingOptions,
): Promise<HttpCeiling> {
  const started = startCeiling(script, args, options);
  try {
    const ready = await nextMessage(started, isMessage<HttpCeilingReady>('ready'), name);
    return { ...started, url: `http://127.0.0.1:${ready.port}` };
  } catch (error) {
    await started.stop();
    throw new Error(`${String(error)} (log: ${options.logFile})`);
  }
}

export interface DatabaseCeiling extends StartedProcess {
  readonly ready: DatabaseCeilingReady;
  measure(kind: CeilingKind, concurrency: number, warmupSeconds: number, durationSeconds: number): Promise<Measured>;
}

export type DatabaseCeilingTarget =
  | { readonly engine: 'postgres'; readonly url: string; readonly poolCap: number }
  | { readonly engine: 'pglite'; readonly dataDir: string };

/** The raw-driver loop (see ceilings/database-ceiling.ts), its table created. */
export async function startDatabaseCeiling(
  target: DatabaseCeilingTarget,
  options: CeilingOptions,
): Promise<DatabaseCeiling> {
  const args =
    target.engine === 'postgres'
      ? ['--engine', 'postgres', '--url', target.url, '--pool-cap', String(target.poolCap)]
      : ['--engine', 'pglite', '--data-dir', target.dataDir];
  const started = startCeiling('database-ceiling.ts', args, options);
  const name = `the ${target.engine} database ceiling`;
  let answer: DatabaseCeilingReady | Failed;
  try {
    answer = await nextMessage(started, isReadyOrFailed, name);
  } catch (error) {
    await started.stop();
    throw new Error(`${String(error)} (log: ${options.logFile})`);
  }
  if (answer.type === 'failed') {
    await started.stop();
    throw new Error(`${name} could not start: ${answer.message}`);
  }
  const ready = answer;
  return {
    ...started,
    ready,
    async measure(kind, concurrency, warmupSeconds, durationSeconds) {
      const answer = nextMessage(
        started,
        (message): message is Measured | Failed =>
          isMessage<Measured>('measured')(message) || isMessage<Failed>('failed')(message),
        name,
      );
      const request: MeasureRequest = { type: 'measure', kind, concurrency, warmupSeconds, durationSeconds };
      started.child.send(request);
      const result = await answer;
      if (result.type === 'failed') throw new Error(`${name} failed (${kind}): ${result.message}`);
      return result;
    },
  };
}

function isReadyOrFailed(message: unknown): message is DatabaseCeilingReady | Failed {
  return isMessage<DatabaseCeilingReady>('ready')(message) || isMessage<Failed>('failed')(message);
}
