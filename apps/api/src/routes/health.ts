import type Router from '@koa/router';
import type { Database } from '@plant-store/db';
import type { AppState } from '../http/app-state.js';
import { respondJson } from '../http/respond-json.js';

/** Probes for orchestrators, without authentication: they reveal nothing but up/ready. */
export function addHealthRoutes(router: Router<AppState>, { db }: { readonly db: Pick<Database, 'ping'> }): void {
  // Liveness: the process answers. Deliberately does not touch the database.
  router.get('/healthz', (ctx) => {
    respondJson(ctx, 200, { status: 'ok' });
  });
  // Readiness: the database answers (a DatabaseUnavailableError renders as 503).
  router.get('/readyz', async (ctx) => {
    await db.ping();
    respondJson(ctx, 200, { status: 'ready' });
  });
}
