import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type StartedProcess, startProcess } from './started-process.js';

const run = promisify(execFile);

export interface ServiceProcess extends StartedProcess {
  readonly url: string;
}

/**
 * Starts the built service (`dist/index.js serve`) on a free port and waits until `/readyz`
 * answers 200 (its database is up). The port is chosen here rather than with PORT=0 because the
 * service logs its address at info level, which the bench turns off.
 */
export async function startService(
  apiRoot: string,
  env: Readonly<Record<string, string>>,
  logFile: string,
): Promise<ServiceProcess> {
  const host = '127.0.0.1';
  const port = await findFreePort(host);
  // Run as a program, as `pnpm start` and the image run it: its first line carries the runtime
  // flags the service runs with.
  const started = startProcess(['serve'], {
    program: join(apiRoot, 'dist/index.js'),
    cwd: apiRoot,
    env: { ...env, HOST: host, PORT: String(port) },
    logFile,
  });
  const url = `http://${host}:${port}`;
  try {
    await waitUntilReady(url, started.exited, 120_000);
  } catch (error) {
    await started.stop();
    throw new Error(`the service did not start (log: ${logFile}): ${String(error)}`);
  }
  return { ...started, url };
}

async function waitUntilReady(url: string, exited: Promise<number | null>, timeoutMs: number): Promise<void> {
  let exitCode: number | null | undefined;
  void exited.then((code) => {
    exitCode = code;
  });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exitCode !== undefined) throw new Error(`it exited with code ${exitCode}`);
    try {
      const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`/readyz did not answer 200 within ${timeoutMs / 1000} s`);
}

function findFreePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port'));
      });
    });
  });
}

/**
 * The rate limit of the bench's own tokens: the highest a token may have. Every request is still
 * counted (the limiter's cost is in the numbers), but a load never meets the default limit.
 */
/**
 * What production runs, as the bench starts the service: NODE_ENV=production, an access line per
 * request (LOG_LEVEL's default, info) and metrics on (served on the API port, as the bench has
 * always measured them), production settings on the embedded database too; `extra` over them.
 */
export function productionEnv(
  childEnv: Readonly<Record<string, string>>,
  storageEnv: Readonly<Record<string, string>>,
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  return {
    ...childEnv,
    ...storageEnv,
    NODE_ENV: 'production',
    METRICS_ON_API_PORT: 'true',
    ALLOW_EMBEDDED_DATABASE: 'true',
    SHUTDOWN_TIMEOUT_MS: '5000',
    ...extra,
  };
}

export const BENCH_RATE_LIMIT = '1000000/1';

/**
 * Issues a token with the service's own command (`node dist/index.js token create`), which also
 * creates the schema: run it before the service starts (PGlite allows one process). Works for
 * both engines, so the service can run with NODE_ENV=production. Its rate limit is
 * BENCH_RATE_LIMIT unless `rateLimit` says otherwise.
 */
export async function issueToken(
  apiRoot: string,
  env: Readonly<Record<string, string>>,
  {
    name,
    scopes,
    rateLimit = BENCH_RATE_LIMIT,
  }: { readonly name: string; readonly scopes: readonly string[]; readonly rateLimit?: string },
): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    [
      join(apiRoot, 'dist/index.js'),
      'token',
      'create',
      '--name',
      name,
      ...scopes.flatMap((scope) => ['--scope', scope]),
      '--rate-limit',
      rateLimit,
    ],
    { cwd: apiRoot, env: { ...env }, timeout: 120_000 },
  );
  // The token is the last line of stdout.
  const token = stdout.trim().split('\n').at(-1)?.trim();
  if (token === undefined || !/^pst_[A-Za-z0-9_-]+$/.test(token)) {
    throw new Error(`the token command printed no token: ${stdout}`);
  }
  return token;
}
