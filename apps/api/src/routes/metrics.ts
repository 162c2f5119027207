import type Router from '@koa/router';
import type { Registry } from 'prom-client';
import type { AppState } from '../http/app-state.js';

export const METRICS_PATH = '/metrics';

/**
 * `GET /metrics`: Prometheus text, without authentication. Scrapers seldom carry the service's
 * bearer tokens, and what it shows is operational (counts and durations by route pattern, status
 * and database operation; process figures), never a token, an id or other plant data; but it names
 * every token, so on the API port only in development or when METRICS_ON_API_PORT=true says so
 * (see config.ts; METRICS_PORT moves it to a port of its own).
 */
export function addMetricsRoute(router: Router<AppState>, registry: Registry): void {
  router.get(METRICS_PATH, async (ctx) => {
    const text = await registry.metrics();
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Content-Type', registry.contentType);
    ctx.status = 200;
    ctx.body = text;
  });
}
