import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from './free-port.js';

/**
 * A Redis server of the test's own (`redis-server` on PATH, nothing kept on disk), that the test
 * may kill and start again on the same port: for outage tests, which must not touch the shared one.
 */
export interface ThrowawayRedis {
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** Starts it again after kill(); resolves once it accepts connections. */
  start(): Promise<void>;
  /** SIGKILLs it: connections are cut, and nothing listens on the port until start(). */
  kill(): Promise<void>;
  /** SIGSTOPs it: connections stay open and nothing answers (a hung host). */
  freeze(): void;
  /** SIGCONTs what freeze() stopped. */
  thaw(): void;
  dispose(): Promise<void>;
}

/** The shared Redis the Redis suites use (the machine's: CI sets it); undefined: those suites are skipped. */
export function testRedisUrl(): string | undefined {
  const url = process.env.TEST_REDIS_URL;
  return url === undefined || url === '' ? undefined : url;
}

export async function startThrowawayRedis(): Promise<ThrowawayRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;

  async function start(): Promise<void> {
    const started = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = started;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const scan = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) resolve();
      };
      started.stdout?.on('data', scan);
      started.stderr?.on('data', scan);
      started.once('error', reject);
      started.once('exit', (code) => reject(new Error(`redis-server exited (code ${code}): ${output}`)));
    });
  }

  async function kill(): Promise<void> {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
    const exited = once(running, 'exit');
    running.kill('SIGKILL');
    await exited;
  }

  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    start,
    kill,
    freeze: () => child?.kill('SIGSTOP'),
    thaw: () => child?.kill('SIGCONT'),
    dispose: kill,
  };
}
