import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the server answers to one request. Bodies are raw text, so tests write int64s exactly. */
export interface ScriptedAnswer {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /** Wait this long before answering. */
  readonly delayMs?: number;
  /** Send the status line, the headers and the start of the body, then nothing more. */
  readonly stallBody?: boolean;
  /** Close the connection instead of answering: the request arrived, its answer is lost. */
  readonly dropConnection?: boolean;
}

export interface RecordedRequest {
  readonly method: string;
  /** Path and query, exactly as sent. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** `performance.now()` when the request arrived. */
  readonly receivedAt: number;
}

export type ScriptFunction = (request: RecordedRequest, index: number) => ScriptedAnswer;
export type Script = readonly ScriptedAnswer[] | ScriptFunction;

export interface ScriptedServer {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  readonly url: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Status for a request the script has no answer for; the tests count requests, so it also fails them. */
export const UNSCRIPTED_STATUS = 599;

const openServers = new Set<Server>();

/**
 * A real HTTP server on 127.0.0.1 that answers each request from `script` (the n-th answer for
 * the n-th request, or a function of the request) and records every request it received.
 * Listens on an ephemeral port unless `port` is given.
 */
export async function startScriptedServer(script: Script, port = 0): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const recorded: RecordedRequest = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: performance.now(),
      };
      const index = requests.push(recorded) - 1;
      const answer =
        typeof script === 'function'
          ? script(recorded, index)
          : (script[index] ?? { status: UNSCRIPTED_STATUS, body: `no answer scripted for request ${index + 1}` });
      setTimeout(() => {
        if (answer.dropConnection) {
          request.socket.destroy();
          return;
        }
        response.writeHead(answer.status, answer.headers);
        if (answer.stallBody) response.write(answer.body ?? '');
        else response.end(answer.body);
      }, answer.delayMs ?? 0);
    });
  });
  // A client that gave up (timeout) leaves the server writing to a closed socket: not a failure here.
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  openServers.add(server);
  const { port: boundPort } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${boundPort}`,
    port: boundPort,
    requests,
    close: () => closeServer(server),
  };
}

function closeServer(server: Server): Promise<void> {
  openServers.delete(server);
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Closes every server still open; register with `afterEach`. */
export async function closeScriptedServers(): Promise<void> {
  await Promise.all([...openServers].map(closeServer));
}

/** A port on 127.0.0.1 where nothing listens (bound once, then released): connecting is refused. */
export async function findClosedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A JSON answer; `body` is the exact JSON text. */
export function json(status: number, body: string, headers: Readonly<Record<string, string>> = {}): ScriptedAnswer {
  return { status, headers: { 'Content-Type': 'application/json; charset=utf-8', ...headers }, body };
}

/** An Error body answer as the service writes it. */
export function errorAnswer(
  status: number,
  error: number,
  message: string,
  headers: Readonly<Record<string, string>> = {},
): ScriptedAnswer {
  return json(status, `{"error":${error},"message":${JSON.stringify(message)}}`, headers);
}
