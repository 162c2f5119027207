import type { Middleware } from 'koa';
import type { AppContext, AppState } from '../http/app-state.js';
import { createAccessLog, type Logger } from '../logger.js';
import { type ServiceMetrics, UNMATCHED_ROUTE } from '../metrics/service-metrics.js';
import type { Tracing } from '../tracing/tracing.js';
import { REQUEST_ID_HEADER, readRequestId } from './request-id.js';

export interface ObserveRequestsOptions {
  /** Where the access line goes; none when absent. */
  readonly log?: Logger | undefined;
  /** Where the request is counted and timed; nowhere when absent. */
  readonly metrics?: ServiceMetrics | undefined;
  /** Where the request's server span goes; none when absent (tracing off). */
  readonly tracing?: Tracing | undefined;
}

/**
 * First in the chain, outside the error middleware, so that it sees the status the client gets.
 * Gives every request an id (the client's X-Request-Id when sane), echoes it, and when the
 * response is ready writes one access line and records the request's metrics. The line has
 * chosen fields only: never headers, the raw path or query, or the body; the token by its name
 * once it authenticated, never the token. With tracing on, the
 * request runs in its server span (the child of the traceparent it brought), named by route
 * pattern once the router has matched, and the line carries the span's trace_id and span_id.
 */
const REQUEST_ID_HEADER_LOWER = REQUEST_ID_HEADER.toLowerCase();

export function observeRequests({ log, metrics, tracing }: ObserveRequestsOptions): Middleware<AppState> {
  const writeAccessLine = log && createAccessLog(log);
  return async (ctx, next) => {
    const started = performance.now();
    const { headers } = ctx.req;
    const header = headers[REQUEST_ID_HEADER_LOWER];
    const requestId = readRequestId(typeof header === 'string' && header !== '' ? header : undefined);
    ctx.state.requestId = requestId;
    ctx.res.setHeader(REQUEST_ID_HEADER, requestId);
    const span = tracing?.startRequest(ctx.method, headers);
    let failed = false;
    try {
      await (span === undefined ? next() : tracing?.runInSpan(span, next));
    } catch (error) {
      // Not expected (the error middleware catches everything): Koa answers it with a 500.
      failed = true;
      throw error;
    } finally {
      const durationMs = performance.now() - started;
      const status = failed ? 500 : ctx.status;
      const route = routeOf(ctx);
      const roundedMs = Math.round(durationMs * 1000) / 1000;
      // The token's name (never the token) once it authenticated: who is using what, and who is
      // limited. Not `token`: the logger redacts that key, whatever it holds.
      const tokenName = ctx.state.token?.name;
      if (span !== undefined) tracing?.endRequest(span, ctx.method, route, status);
      writeAccessLine?.({
        requestId,
        method: ctx.method,
        route,
        status,
        durationMs: roundedMs,
        tokenName,
        trace: span?.spanContext(),
      });
      metrics?.observeRequest({
        method: ctx.method,
        route,
        status,
        durationSeconds: durationMs / 1000,
        token: tokenName,
      });
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
