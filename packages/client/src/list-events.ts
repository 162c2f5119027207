import {
  compareEventCursors,
  type Event,
  type ListEventsQuery,
  type ListEventsQueryInput,
  operations,
  type PlantEventType,
} from '@plant-store/schema';
import { callOperation } from './call-operation.js';
import type { CallOptions, ClientContext } from './client-context.js';
import { type NextEventsQuery, readNextEventsPage } from './next-page.js';
import { PlantStoreError } from './plant-store-error.js';

/** One page of `GET /events`. */
export interface EventsPage {
  /** In the feed's order: the order the changes committed. */
  readonly events: Event[];
  /** The query of the next page (pass it to `listEvents`), or null when this page is the last so far. */
  readonly next: NextEventsQuery | null;
  /** Where to go on from: the last event's cursor, or the `after` asked (undefined: the feed's start). */
  readonly cursor: string | undefined;
}

/**
 * `GET /events`: one page of the event feed (every change to a plant, in commit order), `limit`
 * (1-1000, default 100) events at most after the cursor `after`, of one `type` when given. A
 * cursor older than what the service keeps is a PlantStoreError with `error` 410.
 */
export async function listEvents(
  context: ClientContext,
  query: ListEventsQueryInput = {},
  options: CallOptions = {},
): Promise<EventsPage> {
  const result = await callOperation(
    context,
    operations.listEvents,
    { params: {}, query, retryMode: 'idempotent' },
    options,
  );
  const asked: ListEventsQuery = result.input.query;
  const events = result.output;
  if (events.length > asked.limit) throw result.violation(`${events.length} events, more than limit ${asked.limit}`);
  let previous = asked.after;
  for (const event of events) {
    if (previous !== undefined && compareEventCursors(event.cursor, previous) <= 0) {
      throw result.violation(`event cursor ${event.cursor} does not come after ${previous}`);
    }
    if (asked.type !== undefined && event.type !== asked.type) {
      throw result.violation(`a ${event.type} event in a page of ${asked.type}`);
    }
    previous = event.cursor;
  }
  const next = readNextEventsPage(result.answer.headers.get('Link'), result.request.url, asked);
  // The next page starts where this one ends: following it skips nothing, repeats nothing.
  if (next !== null && next.after !== previous) {
    throw result.violation(`a Link whose next page is not after the page's last event (${previous})`);
  }
  return { events, next, cursor: previous };
}

/** `GET /events/cursor`: where the feed stands now (take it before a full listing, then follow the feed from it). */
export async function getEventCursor(context: ClientContext, options: CallOptions = {}): Promise<string> {
  const { output } = await callOperation(
    context,
    operations.getEventCursor,
    { params: {}, retryMode: 'idempotent' },
    options,
  );
  return output.cursor;
}

export interface IterateEventsOptions {
  /** Start after this cursor (from `getEventCursor`, an event, or a page); absent: the oldest event kept. */
  readonly after?: string;
  /** Only events of this type. */
  readonly type?: PlantEventType;
  /** Events per request, 1-1000; default 100. */
  readonly pageSize?: number;
  /**
   * Keep following once caught up: ask again every `pollMs` for what committed since, until
   * `signal` aborts. Default false: the iteration ends once caught up.
   */
  readonly follow?: boolean;
  /** How long to wait before asking again once caught up (with `follow`); default 1000. */
  readonly pollMs?: number;
  /** Aborts the walk (the pending `next()` throws a PlantStoreError of kind `aborted`). */
  readonly signal?: AbortSignal;
}

/**
 * The event feed, event after event in commit order, page after page; with `follow`, for as long
 * as the signal allows. Keep the last event's `cursor` to go on from it later. A mirror applies an
 * event only when its `data.version` is above the version it holds for that id (a delete's
 * version included), and drops it otherwise.
 */
export async function* iterateEvents(
  context: ClientContext,
  options: IterateEventsOptions = {},
): AsyncGenerator<Event, void, undefined> {
  const { type, pageSize, follow = false, pollMs = 1000, signal } = options;
  let after = options.after;
  for (;;) {
    const query: ListEventsQueryInput = {
      ...(pageSize === undefined ? {} : { limit: pageSize }),
      ...(after === undefined ? {} : { after }),
      ...(type === undefined ? {} : { type }),
    };
    const page = await listEvents(context, query, signal === undefined ? {} : { signal });
    yield* page.events;
    after = page.cursor;
    if (page.next !== null) continue;
    if (!follow) return;
    await pause(pollMs, signal);
  }
}

/** Waits `ms`, or throws the `aborted` error when `signal` aborts first. */
async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const aborted = () =>
      new PlantStoreError({ kind: 'aborted', status: 0, error: 0, message: 'following the event feed was aborted' });
    if (signal?.aborted) return reject(aborted());
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(aborted());
    };
    signal?.addEventListener('abort', stop, { once: true });
  });
}
