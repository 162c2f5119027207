import type { Middleware } from 'koa';
import type { AppState } from '../http/app-state.js';

/**
 * The spec's rule for POST /plants: every failure caused by what the client sent answers
 * HTTP 400; the `error` field still names the precise reason (400, 409, 413 or 415).
 */
export function clientFaultsAs400(): Middleware<AppState> {
  return async (ctx, next) => {
    ctx.state.clientFaultStatus = 400;
    await next();
  };
}
