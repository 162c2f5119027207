import type { Middleware } from 'koa';
import type { AppState } from '../http/app-state.js';

/**
 * Adds OPTIONS to the `Allow` that @koa/router's allowedMethods writes (on a 405, a 501 and the
 * answer to OPTIONS itself): it answers OPTIONS on every path it knows, but lists only the
 * methods of the routes. Placed right before allowedMethods, so it sees what that wrote.
 */
export function allowOptions(): Middleware<AppState> {
  return async (ctx, next) => {
    await next();
    const allow = ctx.res.getHeader('Allow');
    if (typeof allow === 'string' && allow !== '' && !allow.split(/\s*,\s*/).includes('OPTIONS')) {
      ctx.set('Allow', `${allow}, OPTIONS`);
    }
  };
}
