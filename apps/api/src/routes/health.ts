import type Router from '@koa/router';
import type { Readiness } from '../health/readiness.js';
import type { AppState } from '../http/app-state.js';
import { respondJson } from '../http/respond-json.js';

/** Probes for orchestrators, without authentication: they reveal nothing but up/ready. */
export function addHealthRoutes(router: Router<AppState>, { readiness }: { readonly readiness: Readiness }): void {
  // Liveness: the process answers. Deliberately does not touch the database.
  router.get('/healthz', (ctx) => {
    respondJson(ctx, 200, { status: 'ok' });
  });
  // Readiness: the database answers and takes writes, as last asked (at most every half second;
  // see createReadiness). A DatabaseUnavailableError renders as 503.
  router.get('/readyz', async (ctx) => {
    await readiness.check();
    respondJson(ctx, 200, { status: 'ready' });
  });
}
