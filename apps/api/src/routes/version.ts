import { readFileSync } from 'node:fs';
import type Router from '@koa/router';
import type { ServiceVersion } from '@plant-store/schema';
import type { AppState } from '../http/app-state.js';
import { respondJson } from '../http/respond-json.js';

/**
 * The service's release: this package's version. Read once, from package.json two levels above
 * this module (src/routes under tsx and vitest, dist/routes when built).
 */
export function readServiceVersion(): ServiceVersion {
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  const { version } = JSON.parse(text) as { version?: unknown };
  if (typeof version !== 'string') throw new Error('the api package.json has no version');
  return { version };
}

/**
 * `GET /version`, without authentication, like the probes: which release answers (for the
 * console's health strip, and whoever checks a rollout). Tells nothing a release note does not.
 */
export function addVersionRoute(router: Router<AppState>, version: ServiceVersion = readServiceVersion()): void {
  router.get('/version', (ctx) => {
    ctx.set('Cache-Control', 'no-cache');
    respondJson(ctx, 200, version);
  });
}
