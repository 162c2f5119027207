import * as v from 'valibot';
import { INT32_MAX, int32Schema } from './int64.js';
import { ListPlantsQuerySchema } from './list.js';
import { objectMessage } from './text.js';

/** The media type of `POST /plants/import`'s body and `GET /plants/export`'s answer: one JSON text a line. */
export const NDJSON_TYPE = 'application/x-ndjson';

/**
 * The header of `GET /plants/export` naming the event feed's cursor of the export's snapshot: follow
 * `GET /events?after=` from it to keep a copy loaded from the export up to date.
 */
export const EXPORT_CURSOR_HEADER = 'Plant-Store-Event-Cursor';

function countSchema(field: string, description: string) {
  return int32Schema(field, description, 0, INT32_MAX);
}

/** What `POST /plants/import` answers once every line is stored. */
export const ImportResultSchema = v.object(
  {
    lines: countSchema('lines', 'Lines read that held a plant (blank lines are not counted)'),
    stored: countSchema('stored', 'Plants the import created, each announced as plant.created'),
    alreadyStored: countSchema(
      'alreadyStored',
      'Ids already stored exactly as their lines say: counted as stored, written again never (so a retried import answers 200)',
    ),
  },
  objectMessage,
);
export type ImportResult = v.InferOutput<typeof ImportResultSchema>;

/** The query of `GET /plants/export`: optionally one `tag`. */
export const ExportPlantsQuerySchema = v.object({ tag: ListPlantsQuerySchema.entries.tag });
export type ExportPlantsQuery = v.InferOutput<typeof ExportPlantsQuerySchema>;
export type ExportPlantsQueryInput = v.InferInput<typeof ExportPlantsQuerySchema>;
