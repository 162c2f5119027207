import {
  compareEventCursors,
  type ListAuditEventsQuery,
  type ListDeliveriesQuery,
  type ListEventsQuery,
  type ListPlantsQuery,
  operations,
} from '@plant-store/schema';
import LinkHeader from 'http-link-header';
import * as v from 'valibot';
import { PlantStoreError } from './plant-store-error.js';

/** The query of the next page: a ListPlantsQuery whose `after` is always set. */
export type NextPlantsQuery = ListPlantsQuery & { readonly after: bigint };
/** The query of the next page of deliveries: a ListDeliveriesQuery whose `after` is always set. */
export type NextDeliveriesQuery = ListDeliveriesQuery & { readonly after: bigint };
/** The query of the next page of audit events: a ListAuditEventsQuery whose `after` is always set. */
export type NextAuditEventsQuery = ListAuditEventsQuery & { readonly after: bigint };

/** The query of the next page of the event feed: a ListEventsQuery whose `after` is always set. */
export type NextEventsQuery = ListEventsQuery & { readonly after: string };

/** Decimal integers as the service writes them in query strings. */
const DECIMAL_INTEGER = /^-?[0-9]{1,20}$/;

type Refuse = (reason: string, cause?: unknown) => PlantStoreError;

/** How to read each query parameter of a next link back: text as is, or an integer as a number or a bigint. */
type QueryFields = Readonly<Record<string, 'text' | 'number' | 'bigint'>>;

/**
 * The next page named by a `GET /plants` answer's `Link: <...>; rel="next"` (RFC 8288), or
 * null on the last page. The target is resolved against the request URL (the service sends a
 * relative reference) and must be the same plants URL with another query: the client sends its
 * token nowhere else. Its query is read back into a ListPlantsQuery and checked: same tag as
 * asked, and an `after` beyond the requested one, so that walking the pages always ends.
 */
export function readNextPage(
  linkHeader: string | null,
  requestUrl: URL,
  requested: ListPlantsQuery,
): NextPlantsQuery | null {
  const fields = { limit: 'number', tag: 'text', after: 'bigint' } as const;
  return readNextQuery(operations.listPlants, linkHeader, requestUrl, requested, fields);
}

/**
 * The next page named by a `GET /webhooks/{id}/deliveries` answer's Link header, or null on
 * the last page: the same rules as readNextPage (same URL, an `after` beyond the requested one).
 */
export function readNextDeliveriesPage(
  linkHeader: string | null,
  requestUrl: URL,
  requested: ListDeliveriesQuery,
): NextDeliveriesQuery | null {
  const fields = { limit: 'number', after: 'bigint', status: 'text' } as const;
  return readNextQuery(operations.listWebhookDeliveries, linkHeader, requestUrl, requested, fields);
}

/** The next page named by a `GET /audit-events` answer's Link header, or null on the last page (as readNextPage). */
export function readNextAuditEventsPage(
  linkHeader: string | null,
  requestUrl: URL,
  requested: ListAuditEventsQuery,
): NextAuditEventsQuery | null {
  const fields = { limit: 'number', after: 'bigint' } as const;
  return readNextQuery(operations.listAuditEvents, linkHeader, requestUrl, requested, fields);
}

/**
 * The next page named by a `GET /events` answer's Link header, or null on the last page: the same
 * URL, the same `type`, and an `after` cursor beyond the requested one (cursors are opaque text,
 * ordered as the feed is).
 */
export function readNextEventsPage(
  linkHeader: string | null,
  requestUrl: URL,
  requested: ListEventsQuery,
): NextEventsQuery | null {
  const fields = { limit: 'number', after: 'text', type: 'text' } as const;
  const link = readNextLink(operations.listEvents.method, linkHeader, requestUrl, operations.listEvents.query, fields);
  if (link === null) return null;
  const { query: next, refuse } = link;
  if (next.after === undefined) throw refuse('whose next page has no after');
  if (next.type !== requested.type) throw refuse('whose next page has another type');
  if (requested.after !== undefined && compareEventCursors(next.after, requested.after) <= 0) {
    throw refuse(`whose next page does not move past after=${requested.after}`);
  }
  return { ...next, after: next.after };
}

/** The next page's query, checked: an `after` beyond the requested one, and the same filters (text fields). */
function readNextQuery<TQuery extends { readonly after?: bigint }>(
  operation: { readonly method: string; readonly query: v.GenericSchema<unknown, TQuery> },
  linkHeader: string | null,
  requestUrl: URL,
  requested: TQuery,
  fields: QueryFields,
): (TQuery & { readonly after: bigint }) | null {
  const link = readNextLink(operation.method, linkHeader, requestUrl, operation.query, fields);
  if (link === null) return null;
  const { query: next, refuse } = link;
  if (next.after === undefined) throw refuse('whose next page has no after');
  for (const [name, kind] of Object.entries(fields)) {
    const field = name as keyof TQuery;
    if (kind === 'text' && next[field] !== requested[field]) throw refuse(`whose next page has another ${name}`);
  }
  if (requested.after !== undefined && next.after <= requested.after) {
    throw refuse(`whose next page does not move past after=${requested.after}`);
  }
  return { ...next, after: next.after };
}

/**
 * The `rel="next"` target of a Link header, read back into `schema`'s query, with a function
 * that refuses the header naming the request; null when there is no next link. The target must
 * be the request's own origin and path: the client sends its token nowhere else.
 */
function readNextLink<const TSchema extends v.GenericSchema>(
  method: string,
  linkHeader: string | null,
  requestUrl: URL,
  schema: TSchema,
  fields: QueryFields,
): { readonly query: v.InferOutput<TSchema>; readonly refuse: Refuse } | null {
  if (linkHeader === null || linkHeader.trim() === '') return null;
  const refuse: Refuse = (reason, cause) =>
    new PlantStoreError({
      kind: 'invalid-response',
      status: 200,
      error: 0,
      message: `${method} ${requestUrl.pathname}${requestUrl.search} answered a Link header ${reason}: ${linkHeader}`,
      cause,
    });

  let nextRefs: LinkHeader.Reference[];
  try {
    nextRefs = LinkHeader.parse(linkHeader).rel('next');
  } catch (cause) {
    throw refuse('that is not RFC 8288', cause);
  }
  const [nextRef, ...others] = nextRefs;
  if (nextRef === undefined) return null;
  if (others.length > 0) throw refuse('with more than one rel="next"');

  let target: URL;
  try {
    target = new URL(nextRef.uri, requestUrl);
  } catch (cause) {
    throw refuse('whose next target is not a URI reference', cause);
  }
  if (target.origin !== requestUrl.origin || target.pathname !== requestUrl.pathname) {
    throw refuse(
      `whose next page ${target.origin}${target.pathname} is not ${requestUrl.origin}${requestUrl.pathname}`,
    );
  }

  const input: Record<string, unknown> = {};
  for (const [name, kind] of Object.entries(fields)) {
    const values = target.searchParams.getAll(name);
    if (values.length > 1) throw refuse(`whose next page repeats ${name}`);
    const [text] = values;
    if (text === undefined) continue;
    // Integers become numbers/bigints for the schema to judge; anything else stays text, which it refuses.
    if (kind === 'text' || !DECIMAL_INTEGER.test(text)) input[name] = text;
    else input[name] = kind === 'number' ? Number(text) : BigInt(text);
  }
  const result = v.safeParse(schema, input);
  if (!result.success) {
    throw refuse(`whose next page query is invalid (${result.issues.map((issue) => issue.message).join('; ')})`);
  }
  return { query: result.output, refuse };
}
