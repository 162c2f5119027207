import { type Database, parseCursor } from '@plant-store/db';
import { ErrorCode } from '@plant-store/schema';
import { ApiError, invalidRequest } from '../http/api-error.js';
import type { HandlersOf } from './mount-operations.js';

export interface EventHandlersOptions {
  readonly db: Pick<Database, 'listEvents' | 'currentEventCursor'>;
}

/** The event feed: every change to a plant, in commit order. */
export function eventHandlers({ db }: EventHandlersOptions): HandlersOf<'events'> {
  return {
    listEvents: async ({ query }) => {
      const after = query.after === undefined ? undefined : parseCursor(query.after);
      if (after === null) throw invalidRequest('after must be a cursor the feed gave');
      // Written as JSON by the database: answered as it is.
      const page = await db.listEvents({ limit: query.limit, after, type: query.type });
      if (page.expired) {
        throw new ApiError(
          ErrorCode.Gone,
          `the events after cursor ${query.after} are no longer kept: start again from GET /events/cursor and a full listing of the plants`,
        );
      }
      return { json: page.json, nextAfter: page.lastCursor, hasMore: page.hasMore };
    },
    getEventCursor: async () => ({ cursor: await db.currentEventCursor() }),
  };
}
