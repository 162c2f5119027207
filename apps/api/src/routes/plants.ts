import type Router from '@koa/router';
import type { Database } from '@plant-store/db';
import { NewPlantSchema } from '@plant-store/schema';
import type { AppState } from '../http/app-state.js';
import { respondJson } from '../http/respond-json.js';
import { parseInput } from '../http/validate.js';
import { bearerAuth } from '../middleware/bearer-auth.js';
import { clientFaultsAs400 } from '../middleware/client-faults-as-400.js';
import { jsonBody } from '../middleware/json-body.js';

export interface PlantRoutesOptions {
  readonly db: Pick<Database, 'createPlant' | 'authenticateToken'>;
  readonly bodyLimitBytes: number;
}

export function addPlantRoutes(router: Router<AppState>, { db, bodyLimitBytes }: PlantRoutesOptions): void {
  router.post(
    '/plants',
    clientFaultsAs400(),
    bearerAuth(db.authenticateToken, 'plants:write'),
    jsonBody({ limitBytes: bodyLimitBytes }),
    async (ctx) => {
      const newPlant = parseInput(NewPlantSchema, ctx.state.jsonBody);
      const { plant } = await db.createPlant(newPlant);
      respondJson(ctx, 200, plant);
    },
  );
}
