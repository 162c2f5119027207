import type Router from '@koa/router';
import type { Middleware } from 'koa';
import compose from 'koa-compose';
import type { AppState } from '../http/app-state.js';

/** What @koa/router sets on a context it routes, and the routes below read (see routeOf). */
interface RoutedContext {
  captures: string[];
  params: Record<string, string>;
  request: { params: Record<string, string> };
  routerPath: string;
  _matchedRoute: string;
  matched: unknown[];
  router: unknown;
  routeMatched: unknown;
}

/**
 * The router's middleware, with its own answer for the routes without parameters (`POST /plants`, `GET /plants`,
 * `GET /events`...), looked up by method and exact path in a table made once, ahead of the
 * router: for every request @koa/router tests the path against every route's pattern, reads the
 * Host header (for host matching this service does not use), and builds and composes the matched
 * route's chain again (about 4% of the CPU of a 400 or a page, in a profile). A route goes into the
 * table only when the router itself, asked at startup, matches its path (and method) to it alone;
 * everything else (HEAD, routes with parameters, unknown paths and methods) the router routes.
 * The context is left as the router leaves it: the route's pattern, no parameters, the match.
 */
export function routeRequests(router: Router<AppState>): Middleware<AppState> {
  const routes = router.routes() as Middleware<AppState>;
  const table = new Map<
    string,
    Map<string, { readonly path: string; readonly matched: unknown[]; readonly run: Middleware<AppState> }>
  >();
  for (const layer of router.stack) {
    const { path } = layer;
    if (typeof path !== 'string' || layer.paramNames.length > 0) continue;
    for (const method of layer.methods) {
      if (method === 'HEAD') continue;
      const match = router.match(path, method);
      // Only the route itself for this method, and no `router.use` middleware (a layer of no
      // method) on that path: the table runs the route's own chain alone. Routes of other methods
      // on the same path (`GET` and `POST /plants`) are no obstacle: they never run for this one.
      if (
        match.pathAndMethod.length !== 1 ||
        match.pathAndMethod[0] !== layer ||
        match.path.some((matched) => matched.methods.length === 0)
      ) {
        continue;
      }
      const stack = layer.stack as Middleware<AppState>[];
      const run = stack.length === 1 ? (stack[0] as Middleware<AppState>) : compose(stack);
      let paths = table.get(method);
      if (paths === undefined) {
        paths = new Map();
        table.set(method, paths);
      }
      paths.set(path, { path, matched: match.path, run });
    }
  }
  return (ctx, next) => {
    const route = table.get(ctx.method)?.get(ctx.path);
    if (route === undefined) return routes(ctx, next);
    const routed = ctx as unknown as RoutedContext;
    const params = {};
    routed.captures = [];
    routed.request.params = params;
    routed.params = params;
    routed.routerPath = route.path;
    routed._matchedRoute = route.path;
    routed.matched = [...route.matched];
    routed.router = router;
    routed.routeMatched = true;
    return route.run(ctx, next);
  };
}
