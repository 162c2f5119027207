import type Router from '@koa/router';
import type { AppState } from '../http/app-state.js';
import { respondJson } from '../http/respond-json.js';
import type { OpenApiDocument } from '../openapi/openapi-document.js';

/** `GET /openapi.json`, without authentication: the description is public, the data is not. */
export function addOpenApiRoute(router: Router<AppState>, document: OpenApiDocument): void {
  router.get('/openapi.json', (ctx) => {
    ctx.set('Cache-Control', 'no-cache');
    respondJson(ctx, 200, document);
  });
}
