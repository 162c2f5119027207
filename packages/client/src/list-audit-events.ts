import { type AuditEvent, type ListAuditEventsQueryInput, operations } from '@plant-store/schema';
import { callOperation } from './call-operation.js';
import { checkPage } from './check-page.js';
import type { CallOptions, ClientContext } from './client-context.js';
import { type NextAuditEventsQuery, readNextAuditEventsPage } from './next-page.js';

/** One page of `GET /audit-events`. */
export interface AuditEventsPage {
  /** In ascending id order: the order the events were written. */
  readonly events: AuditEvent[];
  /** The query of the next page (pass it to `listAuditEvents`), or null when this page is the last. */
  readonly next: NextAuditEventsQuery | null;
}

/**
 * `GET /audit-events`: one page of the token's team's audit log (every team's with
 * `platform:admin`), `limit` (1-200, default 50) at most, starting after the id `after` when given.
 */
export async function listAuditEvents(
  context: ClientContext,
  query: ListAuditEventsQueryInput = {},
  options: CallOptions = {},
): Promise<AuditEventsPage> {
  const result = await callOperation(
    context,
    operations.listAuditEvents,
    { params: {}, query, retryMode: 'idempotent' },
    options,
  );
  const events = checkPage(result, { noun: 'audit events' });
  const link = result.answer.headers.get('Link');
  return { events, next: readNextAuditEventsPage(link, result.request.url, result.input.query) };
}

export interface IterateAuditEventsOptions {
  /** Events per request, 1-200; default 50. */
  readonly pageSize?: number;
  /** Start after this event id, as a page's `after` does. */
  readonly after?: bigint;
  /** Aborts the walk; the pending `next()` throws a PlantStoreError of kind `aborted`. */
  readonly signal?: AbortSignal;
}

/** Every event of the audit log the token may read, oldest first, page after page, following `Link: rel="next"`. */
export async function* iterateAuditEvents(
  context: ClientContext,
  options: IterateAuditEventsOptions = {},
): AsyncGenerator<AuditEvent, void, undefined> {
  const { pageSize, after, signal } = options;
  let query: ListAuditEventsQueryInput | null = {
    ...(pageSize === undefined ? {} : { limit: pageSize }),
    ...(after === undefined ? {} : { after }),
  };
  while (query !== null) {
    const page = await listAuditEvents(context, query, signal === undefined ? {} : { signal });
    yield* page.events;
    query = page.next;
  }
}
