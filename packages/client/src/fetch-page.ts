import type * as v from 'valibot';
import type { CallOptions, ClientContext, OperationTarget } from './client-context.js';
import { contractViolation, parseAnswer } from './parse-answer.js';
import { type PlantStoreRequest, sendRequest } from './send-request.js';

/** One page of a listing in ascending id order: `GET /plants`, `GET /webhooks/{id}/deliveries`. */
export interface PageRequest<TItem extends { readonly id: bigint }> {
  /** The listing, its URL without a query: the page's query is written into it. */
  readonly target: OperationTarget;
  /** The answer's body: an array of items. */
  readonly schema: v.GenericSchema<unknown, TItem[]>;
  /** The parsed query: `limit` always, `after` when given. */
  readonly query: { readonly limit: number; readonly after?: bigint };
  /** Query parameters the listing adds (a filter), sent between `limit` and `after`. */
  readonly filters?: Readonly<Record<string, string>>;
  /** What the items are, in messages: `plants`. */
  readonly noun: string;
  /** Why an item does not belong on this page (it fails the filter), or null when it does. */
  readonly misplaced?: (item: TItem) => string | null;
}

/**
 * GETs one page, retried like every read, and checks what the iterators rely on to visit every
 * item once rather than assuming it: at most `limit` items, ids ascending and past `after`, none
 * misplaced. Resolves to the items and the answer's Link header, which names the next page.
 */
export async function fetchPage<TItem extends { readonly id: bigint }>(
  context: ClientContext,
  page: PageRequest<TItem>,
  options: CallOptions,
): Promise<{ readonly items: TItem[]; readonly link: string | null }> {
  const { target, query } = page;
  target.url.search = new URLSearchParams({
    limit: String(query.limit),
    ...page.filters,
    ...(query.after === undefined ? {} : { after: String(query.after) }),
  }).toString();
  const request: PlantStoreRequest = {
    ...target,
    retryMode: 'idempotent',
    signal: options.signal,
  };
  const answer = await sendRequest(context.transport, request);
  const items = parseAnswer(page.schema, answer, request);

  if (items.length > query.limit) {
    throw contractViolation(answer, request, `${items.length} ${page.noun}, more than limit ${query.limit}`);
  }
  let previous = query.after;
  for (const item of items) {
    if (previous !== undefined && item.id <= previous) {
      throw contractViolation(answer, request, `id ${item.id} does not come after ${previous}`);
    }
    const misplaced = page.misplaced?.(item) ?? null;
    if (misplaced !== null) throw contractViolation(answer, request, misplaced);
    previous = item.id;
  }
  return { items, link: answer.headers.get('Link') };
}
