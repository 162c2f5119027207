import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type Router from '@koa/router';
import send from 'koa-send';
import type { AppContext, AppState } from '../http/app-state.js';

/** The console's built files (apps/console/dist), wherever the package manager put the package. */
const CONSOLE_DIR = join(dirname(createRequire(import.meta.url).resolve('@plant-store/console/package.json')), 'dist');

/** The only files /console/assets/ serves. */
const ASSETS: ReadonlySet<string> = new Set(['console.js', 'console.css']);

/**
 * Everything from this origin and nothing else: the page's one script and one stylesheet, its
 * calls to the API (connect-src), no inline script or style, no eval, no frames, no forms posted
 * anywhere (the page's forms are handled by its script), no plugins.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The console at `GET /console`, without authentication: the page holds no data, and asks for a
 * token, which it sends only with its own calls to this service. Routes of their own, matched
 * only for their paths: no other request passes through anything added here.
 */
export function addConsoleRoutes(router: Router<AppState>): void {
  router.get('/console/', (ctx) => {
    ctx.status = 301;
    ctx.redirect('/console');
  });
  router.get('/console', async (ctx) => {
    await sendConsoleFile(ctx, 'index.html');
  });
  router.get('/console/assets/:file', async (ctx) => {
    const { file = '' } = ctx.params;
    // Not on the list: no body, so the error middleware answers 404.
    if (!ASSETS.has(file) || ctx.path.endsWith('/')) return;
    await sendConsoleFile(ctx, `assets/${file}`);
  });
}

async function sendConsoleFile(ctx: AppContext, file: string): Promise<void> {
  ctx.set('Content-Security-Policy', CONSOLE_CONTENT_SECURITY_POLICY);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  // The names carry no version: asked again each time (a 304 when unchanged), so an upgrade shows at once.
  ctx.set('Cache-Control', 'no-cache');
  try {
    await send(ctx, file, { root: CONSOLE_DIR, index: false, format: false, gzip: false, brotli: false });
  } catch (error) {
    // A listed file that is missing is a broken build (500, logged), not a client's 404.
    throw new Error(`console file ${file} cannot be read from ${CONSOLE_DIR}`, { cause: error });
  }
}
