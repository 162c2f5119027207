import type Router from '@koa/router';
import type { Database } from '@plant-store/db';
import { ErrorCode, ListPlantsQuerySchema, NewPlantSchema, PlantIdSchema } from '@plant-store/schema';
import { ApiError } from '../http/api-error.js';
import type { AppState } from '../http/app-state.js';
import { nextPageLink } from '../http/next-page-link.js';
import { readInteger, readQueryParameters, readSmallInteger } from '../http/query.js';
import { respondJson } from '../http/respond-json.js';
import { checkInput, parseInput } from '../http/validate.js';
import { bearerAuth } from '../middleware/bearer-auth.js';
import { clientFaultsAs400 } from '../middleware/client-faults-as-400.js';
import { respondError } from '../middleware/handle-errors.js';
import { jsonBody } from '../middleware/json-body.js';
import type { Tracing } from '../tracing/tracing.js';

export interface PlantRoutesOptions {
  readonly db: Pick<Database, 'createPlant' | 'findPlant' | 'listPlants' | 'deletePlant' | 'authenticateToken'>;
  readonly bodyLimitBytes: number;
  /** When tracing: a create stores its request's traceparent with its webhook event. */
  readonly tracing?: Pick<Tracing, 'activeTraceParent'> | undefined;
}

export function addPlantRoutes(router: Router<AppState>, { db, bodyLimitBytes, tracing }: PlantRoutesOptions): void {
  router.get('/plants', bearerAuth(db.authenticateToken, 'plants:read'), async (ctx) => {
    const { limit, tag, after } = readQueryParameters(ctx.querystring, ['limit', 'tag', 'after']);
    const query = parseInput(ListPlantsQuerySchema, {
      ...(limit === undefined ? {} : { limit: readSmallInteger(limit) }),
      ...(tag === undefined ? {} : { tag }),
      ...(after === undefined ? {} : { after: readInteger(after) }),
    });
    const { plants, hasMore } = await db.listPlants(query);
    const last = plants.at(-1);
    if (hasMore && last) {
      const { limit, tag } = query;
      ctx.set(
        'Link',
        nextPageLink({ limit: String(limit), ...(tag === undefined ? {} : { tag }), after: String(last.id) }),
      );
    }
    respondJson(ctx, 200, plants);
  });

  router.post(
    '/plants',
    clientFaultsAs400(),
    bearerAuth(db.authenticateToken, 'plants:write'),
    jsonBody({ limitBytes: bodyLimitBytes }),
    async (ctx) => {
      const checked = checkInput(NewPlantSchema, ctx.state.jsonBody);
      // Answered here rather than thrown: the invalid body is the commonest client error.
      if ('error' in checked) return respondError(ctx, checked.error);
      // The request's traceparent goes with the plant's webhook event: its deliveries, sent later
      // by whichever replica, are traced as this request's children.
      const { plant } = await db.createPlant(checked.output, tracing?.activeTraceParent());
      respondJson(ctx, 200, plant);
    },
  );

  router.get('/plants/:id', bearerAuth(db.authenticateToken, 'plants:read'), async (ctx) => {
    const id = parsePlantId(ctx.params.id);
    const plant = await db.findPlant(id);
    if (plant === null) throw plantNotFound(id);
    respondJson(ctx, 200, plant);
  });

  router.delete('/plants/:id', bearerAuth(db.authenticateToken, 'plants:write'), async (ctx) => {
    const id = parsePlantId(ctx.params.id);
    if (!(await db.deletePlant(id))) throw plantNotFound(id);
    ctx.status = 204;
  });
}

/** The `{id}` of `/plants/{id}`: an int64, or a 400 naming the rule. */
function parsePlantId(text: string | undefined): bigint {
  return parseInput(PlantIdSchema, readInteger(text ?? ''));
}

function plantNotFound(id: bigint): ApiError {
  return new ApiError(ErrorCode.NotFound, `no plant with id ${id}`);
}
