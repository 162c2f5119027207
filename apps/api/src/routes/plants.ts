import type { Database } from '@plant-store/db';
import { ErrorCode } from '@plant-store/schema';
import { ApiError } from '../http/api-error.js';
import { actorOf } from '../http/caller.js';
import type { Tracing } from '../tracing/tracing.js';
import type { HandlersOf } from './mount-operations.js';

export interface PlantHandlersOptions {
  readonly db: Pick<Database, 'createPlant' | 'findPlant' | 'listPlants' | 'deletePlant'>;
  /** When tracing: a create stores its request's traceparent with its webhook event. */
  readonly tracing?: Pick<Tracing, 'activeTraceParent'> | undefined;
}

/**
 * The plant operations: their input arrives validated, their statuses come from the contract.
 * Plants are one catalogue shared by every team: any token with the scope reads or changes any
 * plant. The creating team is kept with each plant, and a delete goes in the deleting team's
 * audit log.
 */
export function plantHandlers({ db, tracing }: PlantHandlersOptions): HandlersOf<'plants'> {
  return {
    // Written as JSON by the database: answered as it is.
    listPlants: ({ query }) => db.listPlants(query),
    // The request's traceparent goes with the plant's webhook event: its deliveries, sent later
    // by whichever replica, are traced as this request's children.
    createPlant: async ({ body }, caller) =>
      (await db.createPlant(body, { traceParent: tracing?.activeTraceParent(), team: caller.token.team })).plant,
    getPlant: async ({ params: { id } }) => {
      const plant = await db.findPlant(id);
      if (plant === null) throw plantNotFound(id);
      return plant;
    },
    deletePlant: async ({ params: { id } }, caller) => {
      if (!(await db.deletePlant(id, actorOf(caller)))) throw plantNotFound(id);
    },
  };
}

export function plantNotFound(id: bigint): ApiError {
  return new ApiError(ErrorCode.NotFound, `no plant with id ${id}`);
}
