import { createServer, type Server, type ServerResponse } from 'node:http';
import { ErrorCode, stringifyJson } from '@plant-store/schema';
import type { Registry } from 'prom-client';
import type { Logger } from '../logger.js';
import { METRICS_PATH } from '../routes/metrics.js';

/**
 * A listener of its own that serves only `GET /metrics` (METRICS_PORT): the API's port can then
 * be exposed while this one stays reachable to the scraper alone.
 */
export function createMetricsServer(registry: Registry, log: Logger): Server {
  return createServer((req, res) => {
    const path = req.url?.split('?')[0];
    if (path !== METRICS_PATH) return answerError(res, ErrorCode.NotFound, `no route for ${req.method} ${path}`);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return answerError(res, ErrorCode.MethodNotAllowed, `method ${req.method} is not allowed on ${METRICS_PATH}`);
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
  });
}

function answerError(res: ServerResponse, code: ErrorCode, message: string): void {
  const body = stringifyJson({ error: code, message });
  res.writeHead(code, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}
