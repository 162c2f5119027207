import { createServer, type Server, type ServerResponse } from 'node:http';
import { ErrorCode, stringifyJson } from '@plant-store/schema';
import type { Registry } from 'prom-client';
import { guardConnections } from '../http/connection-guard.js';
import type { Logger } from '../logger.js';
import { shownPath } from '../middleware/handle-errors.js';
import { METRICS_PATH } from '../routes/metrics.js';

export interface MetricsServerOptions {
  /** Resolves when the database answers (`/readyz`); rejects with DatabaseUnavailableError when not. */
  readonly ready: () => Promise<void>;
}

/**
 * The platform's probes and scrapes send their request as soon as they connect and want nothing
 * kept open for them: a connection that has not sent its headers within 2 s, or sits idle for
 * 2 s, is closed, checked every 250 ms. 512 connections at most; at the cap a newcomer closes the
 * longest-waiting connection of the address holding the most (see guardConnections), so a client
 * holding hundreds of idle or half-sent connections here evicts its own and never a probe.
 */
export const METRICS_SERVER_CONNECTIONS = { max: 512, idleMs: 2_000, checkIntervalMs: 250 } as const;

/** What the platform's side port serves. */
const SIDE_PATHS: ReadonlySet<string> = new Set([METRICS_PATH, '/healthz', '/readyz']);

/**
 * A listener of its own (METRICS_PORT) for the platform: `GET /metrics` for the scraper, and the
 * probes `GET /healthz` and `GET /readyz` as the API's port serves them. The API's port can then
 * be exposed (and flooded) while this one stays reachable to the platform alone.
 */
export function createMetricsServer(registry: Registry, log: Logger, { ready }: MetricsServerOptions): Server {
  const { idleMs, checkIntervalMs } = METRICS_SERVER_CONNECTIONS;
  const server = createServer(
    {
      headersTimeout: idleMs,
      requestTimeout: 2 * idleMs,
      keepAliveTimeout: idleMs,
      connectionsCheckingInterval: checkIntervalMs,
    },
    (req, res) => {
      const path = req.url?.split('?')[0] ?? '';
      if (!SIDE_PATHS.has(path)) {
        return answerError(res, ErrorCode.NotFound, `no route for ${req.method} ${shownPath(path)}`);
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('Allow', 'GET, HEAD');
        return answerError(res, ErrorCode.MethodNotAllowed, `method ${req.method} is not allowed on ${path}`);
      }
      if (path === '/healthz') return answerJson(res, req.method, { status: 'ok' });
      if (path === '/readyz') {
        ready().then(
          () => answerJson(res, req.method, { status: 'ready' }),
          () => {
            res.setHeader('Retry-After', '1');
            answerError(res, ErrorCode.DatabaseUnavailable, 'the database is unavailable; retry shortly');
          },
        );
        return;
      }
      registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' });
          res.end(req.method === 'HEAD' ? undefined : text);
        },
        (error: unknown) => {
          log.error({ err: error }, 'metrics failed');
          answerError(res, ErrorCode.Internal, 'internal error');
        },
      );
    },
  );
  guardConnections(server, METRICS_SERVER_CONNECTIONS);
  return server;
}

function answerJson(res: ServerResponse, method: string | undefined, body: object): void {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(method === 'HEAD' ? undefined : text);
}

function answerError(res: ServerResponse, code: ErrorCode, message: string): void {
  const body = stringifyJson({ error: code, message });
  res.writeHead(code, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}
