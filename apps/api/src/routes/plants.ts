import type { Database } from '@plant-store/db';
import { ErrorCode } from '@plant-store/schema';
import { ApiError, invalidRequest } from '../http/api-error.js';
import { actorOf } from '../http/caller.js';
import { ifMatchVersions, versionTag } from '../http/preconditions.js';
import type { Tracing } from '../tracing/tracing.js';
import type { HandlersOf } from './mount-operations.js';

export interface PlantHandlersOptions {
  readonly db: Pick<Database, 'createPlant' | 'findPlant' | 'updatePlant' | 'listPlants' | 'deletePlant'>;
  /** When tracing: a change stores its request's traceparent with its webhook event. */
  readonly tracing?: Pick<Tracing, 'activeTraceParent'> | undefined;
}

/**
 * The plant operations: their input arrives validated, their statuses come from the contract.
 * Plants are one catalogue shared by every team: any token with the scope reads or changes any
 * plant. The creating team is kept with each plant, and a change or delete goes in the acting
 * team's audit log.
 */
export function plantHandlers({
  db,
  tracing,
}: PlantHandlersOptions): Omit<HandlersOf<'plants'>, 'importPlants' | 'exportPlants'> {
  return {
    // Written as JSON by the database: answered as it is.
    listPlants: async ({ query }) => {
      const { json, lastId, hasMore } = await db.listPlants(query);
      return { json, nextAfter: lastId?.toString(), hasMore };
    },
    // The request's traceparent goes with the plant's webhook event: its deliveries, sent later
    // by whichever replica, are traced as this request's children.
    createPlant: async ({ body }, caller) => {
      const { plant, version } = await db.createPlant(body, {
        traceParent: tracing?.activeTraceParent(),
        team: caller.token.team,
      });
      return { value: plant, version };
    },
    getPlant: async ({ params: { id } }) => {
      const found = await db.findPlant(id);
      if (found === null) throw plantNotFound(id);
      return { value: found.plant, version: found.version };
    },
    updatePlant: async ({ params: { id }, body, conditions }, caller) => {
      if (body.id !== undefined && body.id !== id) {
        throw invalidRequest(`id cannot change: the body's id ${body.id} is not the path's ${id}`);
      }
      const result = await db.updatePlant({
        id,
        patch: {
          ...(body.name === undefined ? {} : { name: body.name }),
          ...(body.tag === undefined ? {} : { tag: body.tag }),
        },
        ifMatch: ifMatchVersions(conditions.ifMatch),
        actor: actorOf(caller),
        traceParent: tracing?.activeTraceParent(),
      });
      if (result.outcome === 'missing') throw plantNotFound(id);
      if (result.outcome === 'mismatch') throw versionMismatch(id, result.version);
      return { value: result.plant, version: result.version };
    },
    deletePlant: async ({ params: { id }, conditions }, caller) => {
      const result = await db.deletePlant(id, actorOf(caller), {
        ifMatch: ifMatchVersions(conditions.ifMatch),
        traceParent: tracing?.activeTraceParent(),
      });
      if (result.outcome === 'missing') throw plantNotFound(id);
      if (result.outcome === 'mismatch') throw versionMismatch(id, result.version);
    },
  };
}

export function plantNotFound(id: bigint): ApiError {
  return new ApiError(ErrorCode.NotFound, `no plant with id ${id}`);
}

/** The 412 of a change under If-Match: the plant has another version (its ETag goes along). */
export function versionMismatch(id: bigint, version: bigint): ApiError {
  return new ApiError(
    ErrorCode.PreconditionFailed,
    `plant ${id} has version ${versionTag(version)}, none of those If-Match names`,
    { headers: { ETag: versionTag(version) } },
  );
}
