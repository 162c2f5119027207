import type { OperationDeclaration } from '@plant-store/schema';
import type { OperationResult } from './call-operation.js';

/** What a page of a listing is checked for (`GET /plants`, `GET /webhooks/{id}/deliveries`). */
export interface PageCheck<TItem extends { readonly id: bigint }> {
  /** What the items are, in messages: `plants`. */
  readonly noun: string;
  /** Why an item does not belong on this page (it fails the filter), or null when it does. */
  readonly misplaced?: (item: TItem) => string | null;
}

type PageResult<TItem> = Pick<OperationResult<OperationDeclaration>, 'violation'> & {
  readonly input: { readonly query: { readonly limit: number; readonly after?: bigint } };
  readonly output: TItem[];
};

/**
 * The items of one page, checked for what the iterators rely on to visit every item once rather
 * than assuming it: at most `limit` items, ids ascending and past `after`, none misplaced.
 */
export function checkPage<TItem extends { readonly id: bigint }>(
  { input: { query }, output: items, violation }: PageResult<TItem>,
  { noun, misplaced }: PageCheck<TItem>,
): TItem[] {
  if (items.length > query.limit) throw violation(`${items.length} ${noun}, more than limit ${query.limit}`);
  let previous = query.after;
  for (const item of items) {
    if (previous !== undefined && item.id <= previous) {
      throw violation(`id ${item.id} does not come after ${previous}`);
    }
    const reason = misplaced?.(item) ?? null;
    if (reason !== null) throw violation(reason);
    previous = item.id;
  }
  return items;
}
