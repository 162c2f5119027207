import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { createTestStorage, type TestStorage } from '@plant-store/db/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type ServiceProcess, spawnApi, startServiceProcess } from './test-support/service-process.js';

// Engine-independent (the connection limits are the HTTP server's): on the embedded database.

const CAP = 50;
const FLOOD = 4 * CAP;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function storage(): Promise<TestStorage> {
  const created = await createTestStorage('pglite', { migrated: true });
  cleanups.push(() => created.dispose());
  return created;
}

/** The metrics listener's URL, from the `listening` line. */
function metricsUrlOf(service: ServiceProcess): string {
  for (const line of service.output().split('\n')) {
    if (!line.includes('"message":"listening"')) continue;
    const { metrics } = JSON.parse(line) as { metrics: string };
    return metrics;
  }
  throw new Error(`no listening line: ${service.output()}`);
}

function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** A connection that sends requests one after another and reads each whole answer (small JSON bodies). */
class KeepAliveConnection {
  private buffered = '';
  private constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffered += chunk;
    });
  }

  static async open(url: string): Promise<KeepAliveConnection> {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    return new KeepAliveConnection(socket);
  }

  /** `GET path` on this connection; the status of its answer. */
  async get(path: string): Promise<number> {
    this.buffered = '';
    this.socket.write(`GET ${path} HTTP/1.1\r\nHost: test\r\n\r\n`);
    await vi.waitFor(
      () => {
        const match = /Content-Length: (\d+)\r\n[\s\S]*?\r\n\r\n([\s\S]*)$/i.exec(this.buffered);
        expect(match !== null && Buffer.byteLength(match[2] ?? '') >= Number(match[1])).toBe(true);
      },
      { timeout: 5_000, interval: 10 },
    );
    return Number(/^HTTP\/1\.1 (\d{3})/.exec(this.buffered)?.[1]);
  }

  close(): void {
    this.socket.destroy();
  }
}

describe('connection limits', () => {
  it('holds its descriptors under a flood of idle half-sent connections, evicting the flood, never the others', async () => {
    const where = await storage();
    const service = await startServiceProcess({
      DATA_DIR: where.dataDir,
      MAX_CONNECTIONS: String(CAP),
      METRICS_PORT: '0',
    });
    cleanups.push(() => service.kill());
    const pid = service.child.pid ?? 0;
    const metricsUrl = metricsUrlOf(service);

    // A client that connected before the flood, keeping its connection alive.
    const held = await KeepAliveConnection.open(service.url);
    cleanups.push(async () => held.close());
    expect(await held.get('/healthz')).toBe(200);
    const fdsBefore = openFds(pid);

    // The flood, from another client address: connections that send half a request line and then nothing.
    const { hostname, port } = new URL(service.url);
    let closedByServer = 0;
    const flood: Socket[] = [];
    for (let index = 0; index < FLOOD; index++) {
      const socket = connect({ port: Number(port), host: hostname, localAddress: '127.0.0.2' });
      socket.on('error', () => {});
      socket.once('close', () => {
        closedByServer++;
      });
      socket.write('GET /healthz HTTP/1.1\r\nHost: te');
      flood.push(socket);
    }
    cleanups.push(async () => {
      for (const socket of flood) socket.destroy();
    });
    // Past the cap (the held connection takes one place) each newcomer closed the flood's oldest.
    await vi.waitFor(() => expect(closedByServer).toBeGreaterThanOrEqual(FLOOD - (CAP - 1)), { timeout: 10_000 });
    const fdsDuringFlood = openFds(pid);
    const closedAtOnce = closedByServer;
    // The flood's newest are the ones left: its oldest were evicted first.
    expect(flood.slice(-(CAP - 1)).every((socket) => !socket.destroyed)).toBe(true);

    // The held connection is still served, and so is a new client, and the probes on the platform's port.
    expect(await held.get('/healthz')).toBe(200);
    const newcomer = await fetch(new URL('/healthz', service.url), { signal: AbortSignal.timeout(5_000) });
    expect(newcomer.status).toBe(200);
    expect((await fetch(new URL('/healthz', metricsUrl))).status).toBe(200);
    expect((await fetch(new URL('/readyz', metricsUrl))).status).toBe(200);

    process.stdout.write(
      `connection flood: ${FLOOD} half-sent connections from another address against MAX_CONNECTIONS=${CAP}; ` +
        `${closedAtOnce} of them closed by the server at once (the oldest first); open descriptors ${fdsBefore} before, ` +
        `${fdsDuringFlood} during; the held connection and a new client served throughout\n`,
    );
    // The descriptors the flood could take are bounded by the cap (a few more for the probes).
    expect(fdsDuringFlood - fdsBefore).toBeLessThanOrEqual(CAP + 5);
    expect(service.alive()).toBe(true);
  });

  it('closes a connection that sends nothing within HEADERS_TIMEOUT_MS (Node alone would keep it for ever)', async () => {
    const where = await storage();
    const service = await startServiceProcess({
      DATA_DIR: where.dataDir,
      HEADERS_TIMEOUT_MS: '1000',
      REQUEST_TIMEOUT_MS: '2000',
      KEEP_ALIVE_TIMEOUT_MS: '1000',
    });
    cleanups.push(() => service.kill());
    const { hostname, port } = new URL(service.url);
    const socket = connect(Number(port), hostname);
    socket.on('error', () => {});
    cleanups.push(async () => {
      socket.destroy();
    });
    await once(socket, 'close');
    expect(service.alive()).toBe(true);
  });

  it('closes a connection whose request headers do not arrive within HEADERS_TIMEOUT_MS', async () => {
    const where = await storage();
    const service = await startServiceProcess({
      DATA_DIR: where.dataDir,
      HEADERS_TIMEOUT_MS: '1000',
      REQUEST_TIMEOUT_MS: '2000',
    });
    cleanups.push(() => service.kill());
    const { hostname, port } = new URL(service.url);
    const socket = connect(Number(port), hostname);
    socket.on('error', () => {});
    let answer = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      answer += chunk;
    });
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write('GET /healthz HTTP/1.1\r\nHost: te');
    // Closed by the server (Node answers 408 first when it can), never left open.
    await closed;
    expect(answer === '' || answer.startsWith('HTTP/1.1 408')).toBe(true);
  });

  it('exits on SIGTERM within the drain timeout and its backstop, with its log pipe blocked and connections held open', async () => {
    const where = await storage();
    const port = await freePort();
    // stdout and stderr are pipes this test never reads: once full, every log write would block.
    const child = spawnApi([], { DATA_DIR: where.dataDir, PORT: String(port), SHUTDOWN_TIMEOUT_MS: '2000' });
    const exited = once(child, 'exit');
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    const url = `http://127.0.0.1:${port}`;
    await vi.waitFor(async () => expect((await fetch(`${url}/healthz`)).status).toBe(200), {
      timeout: 60_000,
      interval: 100,
    });
    // Far more access lines than the pipe holds (about 200 bytes each, against 64 KB).
    const keepAlive = await KeepAliveConnection.open(url);
    cleanups.push(async () => keepAlive.close());
    for (let index = 0; index < 800; index++) expect(await keepAlive.get('/healthz')).toBe(200);
    // And connections that will never finish their request.
    const halfSent: Socket[] = [];
    for (let index = 0; index < 20; index++) {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      socket.write('POST /plants HTTP/1.1\r\nHost: test\r\nContent-Length: 100\r\n\r\n{"id":');
      halfSent.push(socket);
    }
    cleanups.push(async () => {
      for (const socket of halfSent) socket.destroy();
    });

    const signalled = performance.now();
    child.kill('SIGTERM');
    // SHUTDOWN_TIMEOUT_MS (2 s) and the 5 s backstop, with room for a slow machine.
    const [code] = (await Promise.race([
      exited,
      new Promise((resolve) => setTimeout(resolve, 20_000, ['still running'])),
    ])) as [number | null | string];
    process.stdout.write(
      `SIGTERM with a blocked log pipe: exited with ${code} after ${Math.round(performance.now() - signalled)} ms\n`,
    );
    expect(code === 0 || code === 1).toBe(true);
  });
});

/** A port nothing listens on (for a process whose log, which names its port, is not read). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
