import Router from '@koa/router';
import type { Database } from '@plant-store/db';
import Koa from 'koa';
import type { AppState } from './http/app-state.js';
import { handleErrors } from './middleware/handle-errors.js';
import { createOpenApiDocument } from './openapi/openapi-document.js';
import { addDocsRoutes } from './routes/docs.js';
import { addHealthRoutes } from './routes/health.js';
import { addOpenApiRoute } from './routes/openapi.js';
import { addPlantRoutes } from './routes/plants.js';

export interface AppDependencies {
  readonly db: Pick<
    Database,
    'createPlant' | 'findPlant' | 'listPlants' | 'deletePlant' | 'authenticateToken' | 'ping'
  >;
  readonly bodyLimitBytes: number;
}

/** The HTTP application, wired to its dependencies. Does no I/O of its own. */
export function createApp(deps: AppDependencies): Koa<AppState> {
  const app = new Koa<AppState>();
  const router = new Router<AppState>();
  addHealthRoutes(router, deps);
  addPlantRoutes(router, deps);
  addOpenApiRoute(router, createOpenApiDocument({ bodyLimitBytes: deps.bodyLimitBytes }));
  addDocsRoutes(router);

  app.use(handleErrors());
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
