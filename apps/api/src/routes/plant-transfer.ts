import { pipeline, type Transform } from 'node:stream';
import { createGzip } from 'node:zlib';
import type { Database } from '@plant-store/db';
import { ErrorCode, EXPORT_CURSOR_HEADER, NDJSON_TYPE, NewPlantSchema } from '@plant-store/schema';
import { ApiError, invalidRequest } from '../http/api-error.js';
import type { AppContext } from '../http/app-state.js';
import { actorOf } from '../http/caller.js';
import { decodedBody } from '../http/decoded-body.js';
import { INT64_HEADER, int64FormOf, int64StringReader } from '../http/int64-form.js';
import { int64StringLines } from '../http/int64-string-lines.js';
import { exemptFromRequestTimeout } from '../http/long-requests.js';
import { ndjsonLines } from '../http/ndjson-lines.js';
import { plainNewPlant } from '../http/plain-new-plant.js';
import { respondJson } from '../http/respond-json.js';
import { inlineJsonSchemaOf } from '../openapi/json-schemas.js';
import type { Tracing } from '../tracing/tracing.js';
import type { Handlers } from './mount-operations.js';

export interface TransferHandlersOptions {
  readonly db: Pick<Database, 'importPlants' | 'exportPlants'>;
  /** The most bytes one line of an import may have: the JSON body limit of `POST /plants`. */
  readonly maxLineBytes: number;
  /** When tracing: every plant.created event of an import keeps its request's traceparent. */
  readonly tracing?: Pick<Tracing, 'activeTraceParent'> | undefined;
}

/** The 415 for an import body of another media type. */
export const NOT_NDJSON_MESSAGE = `request body must be NDJSON sent as Content-Type: ${NDJSON_TYPE}`;

/**
 * Moving the catalogue in and out in one request each: `POST /plants/import` streams the body's lines
 * into the database (see Database.importPlants) and `GET /plants/export` streams one snapshot out
 * (see Database.exportPlants). Neither holds more than a line, or a chunk, in memory.
 */
export function transferHandlers({
  db,
  maxLineBytes,
  tracing,
}: TransferHandlersOptions): Pick<Handlers, 'importPlants' | 'exportPlants'> {
  const readInt64Strings = int64StringReader(inlineJsonSchemaOf(NewPlantSchema));
  return {
    importPlants: async ({ ctx }, caller) => {
      const int64Form = int64FormOf(ctx.req.headers);
      requireNdjson(ctx);
      exemptFromRequestTimeout(ctx.req);
      const lines = ndjsonLines(decodedBody(ctx.req), NewPlantSchema, {
        maxLineBytes,
        prepare: int64Form === 'string' ? readInt64Strings : undefined,
        plain: int64Form === 'string' ? undefined : plainNewPlant,
      });
      const {
        lines: count,
        stored,
        alreadyStored,
      } = await db.importPlants(lines, {
        actor: actorOf(caller),
        traceParent: tracing?.activeTraceParent(),
      });
      respondJson(ctx, 200, { lines: count, stored, alreadyStored }, int64Form);
    },
    exportPlants: async ({ query, ctx }) => {
      const int64Form = int64FormOf(ctx.req.headers);
      const { cursor, lines } = await db.exportPlants({ tag: query.tag });
      ctx.status = 200;
      ctx.set(EXPORT_CURSOR_HEADER, cursor);
      ctx.set('Vary', `Accept-Encoding, ${INT64_HEADER}`);
      if (int64Form === 'string') ctx.set(INT64_HEADER, 'string');
      ctx.type = NDJSON_TYPE;
      const gzip = ctx.acceptsEncodings('gzip', 'identity') === 'gzip';
      if (gzip) ctx.set('Content-Encoding', 'gzip');
      const stages: Transform[] = [
        ...(int64Form === 'string' ? [int64StringLines()] : []),
        ...(gzip ? [createGzip()] : []),
      ];
      // Destroying the answer (the client hung up) destroys the lines too: the export ends.
      ctx.body = stages.length === 0 ? lines : (pipeline([lines, ...stages], ignore) as Transform);
    },
  };
}

/** An import's body must be NDJSON in UTF-8: 415 otherwise, 400 when there is none at all. */
function requireNdjson(ctx: AppContext): void {
  const type = ctx.request.is(NDJSON_TYPE);
  if (type === null) throw invalidRequest('request body is missing');
  if (type === false) throw new ApiError(ErrorCode.UnsupportedMediaType, NOT_NDJSON_MESSAGE);
  const charset = ctx.request.charset.toLowerCase();
  if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') {
    throw new ApiError(ErrorCode.UnsupportedMediaType, `request body must be UTF-8, not ${charset}`);
  }
}

function ignore(): void {}
