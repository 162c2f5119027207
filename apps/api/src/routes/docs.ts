import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Router from '@koa/router';
import send from 'koa-send';
import type { AppContext, AppState } from '../http/app-state.js';

/** swagger-ui-dist's own folder, wherever the package manager put it. */
const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
/**
 * The page and its start-up script live in apps/api/static/docs. This module is
 * src/routes/docs.ts under tsx and vitest and dist/routes/docs.js when built: both two levels
 * below the package root.
 */
const STATIC_DIR = fileURLToPath(new URL('../../static/docs/', import.meta.url));

/** The only files /docs/assets/ serves: URL name -> folder it is read from. */
const ASSETS: ReadonlyMap<string, string> = new Map([
  ['swagger-ui.css', SWAGGER_UI_DIR],
  ['swagger-ui-bundle.js', SWAGGER_UI_DIR],
  ['index.css', SWAGGER_UI_DIR],
  ['favicon-32x32.png', SWAGGER_UI_DIR],
  ['init-swagger-ui.js', STATIC_DIR],
]);

/**
 * Everything from this origin, no inline script, no eval. Swagger UI needs only data: images
 * (its CSS inlines its icons); it sets styles through the DOM, which the policy does not block.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The interactive API reference, without authentication (it shows only what /openapi.json
 * already says). Swagger UI comes from the installed swagger-ui-dist, never from the internet.
 */
export function addDocsRoutes(router: Router<AppState>): void {
  // One canonical address for the page: /docs/ (a link someone typed) points there.
  router.get('/docs/', (ctx) => {
    ctx.status = 301;
    ctx.redirect('/docs');
  });
  router.get('/docs', async (ctx) => {
    ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    ctx.set('Cache-Control', 'no-cache');
    await sendFile(ctx, STATIC_DIR, 'index.html');
  });

  router.get('/docs/assets/:file', async (ctx) => {
    const { file = '' } = ctx.params;
    const dir = ASSETS.get(file);
    // Not on the list (or /docs/assets/name/): no body, so the error middleware answers 404.
    if (dir === undefined || ctx.path.endsWith('/')) return;
    // The names carry no version: cached for a while, not forever, so an upgrade shows up soon.
    ctx.set('Cache-Control', 'public, max-age=3600');
    await sendFile(ctx, dir, file);
  });
}

async function sendFile(ctx: AppContext, root: string, file: string): Promise<void> {
  ctx.set('X-Content-Type-Options', 'nosniff');
  try {
    await send(ctx, file, { root, index: false, format: false, gzip: false, brotli: false });
  } catch (error) {
    // A listed file that is missing is a broken installation (500, logged), not a client's 404
    // whose message would show a server path.
    throw new Error(`docs file ${file} cannot be read from ${root}`, { cause: error });
  }
}
