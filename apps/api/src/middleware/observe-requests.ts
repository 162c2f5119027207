import type { Middleware } from 'koa';
import type { AppContext, AppState } from '../http/app-state.js';
import type { Logger } from '../logger.js';
import { type ServiceMetrics, UNMATCHED_ROUTE } from '../metrics/service-metrics.js';
import { REQUEST_ID_HEADER, readRequestId } from './request-id.js';

export interface ObserveRequestsOptions {
  /** Where the access line goes; none when absent. */
  readonly log?: Logger | undefined;
  /** Where the request is counted and timed; nowhere when absent. */
  readonly metrics?: ServiceMetrics | undefined;
}

/**
 * First in the chain, outside the error middleware, so that it sees the status the client gets.
 * Gives every request an id (the client's X-Request-Id when sane), echoes it, and when the
 * response is ready writes one access line and records the request's metrics. The line has
 * chosen fields only: never headers, the raw path or query, or the body.
 */
const REQUEST_ID_HEADER_LOWER = REQUEST_ID_HEADER.toLowerCase();

export function observeRequests({ log, metrics }: ObserveRequestsOptions): Middleware<AppState> {
  return async (ctx, next) => {
    const started = performance.now();
    const header = ctx.req.headers[REQUEST_ID_HEADER_LOWER];
    const requestId = readRequestId(typeof header === 'string' && header !== '' ? header : undefined);
    ctx.state.requestId = requestId;
    ctx.res.setHeader(REQUEST_ID_HEADER, requestId);
    let failed = false;
    try {
      await next();
    } catch (error) {
      // Not expected (the error middleware catches everything): Koa answers it with a 500.
      failed = true;
      throw error;
    } finally {
      const durationMs = performance.now() - started;
      const status = failed ? 500 : ctx.status;
      const route = routeOf(ctx);
      log?.info(
        { requestId, method: ctx.method, route, status, durationMs: Math.round(durationMs * 1000) / 1000 },
        'request',
      );
      metrics?.observeRequest({ method: ctx.method, route, status, durationSeconds: durationMs / 1000 });
    }
  };
}

/**
 * The pattern of the route that served the request (`/plants/:id`), as @koa/router records it,
 * or `unmatched`: a label with few values, unlike the raw path.
 */
export function routeOf(ctx: AppContext): string {
  const route: unknown = ctx._matchedRoute;
  return typeof route === 'string' ? route : UNMATCHED_ROUTE;
}
