import { type ListPlantsQuery, ListPlantsQuerySchema } from '@plant-store/schema';
import LinkHeader from 'http-link-header';
import * as v from 'valibot';
import { PlantStoreError } from './plant-store-error.js';

/** The query of the next page: a ListPlantsQuery whose `after` is always set. */
export type NextPlantsQuery = ListPlantsQuery & { readonly after: bigint };

/** Decimal integers as the service writes them in query strings. */
const DECIMAL_INTEGER = /^-?[0-9]{1,20}$/;

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
  if (linkHeader === null || linkHeader.trim() === '') return null;
  const refuse = (reason: string, cause?: unknown) =>
    new PlantStoreError({
      kind: 'invalid-response',
      status: 200,
      error: 0,
      message: `GET ${requestUrl.pathname}${requestUrl.search} answered a Link header ${reason}: ${linkHeader}`,
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
  for (const name of ['limit', 'tag', 'after'] as const) {
    const values = target.searchParams.getAll(name);
    if (values.length > 1) throw refuse(`whose next page repeats ${name}`);
    const [text] = values;
    if (text === undefined) continue;
    // Integers become numbers/bigints for the schema to judge; anything else stays text, which it refuses.
    if (name === 'tag' || !DECIMAL_INTEGER.test(text)) input[name] = text;
    else input[name] = name === 'limit' ? Number(text) : BigInt(text);
  }
  const result = v.safeParse(ListPlantsQuerySchema, input);
  if (!result.success) {
    throw refuse(`whose next page query is invalid (${result.issues.map((issue) => issue.message).join('; ')})`);
  }
  const next = result.output;
  if (next.after === undefined) throw refuse('whose next page has no after');
  if (next.tag !== requested.tag) throw refuse('whose next page has another tag');
  if (requested.after !== undefined && next.after <= requested.after) {
    throw refuse(`whose next page does not move past after=${requested.after}`);
  }
  return { ...next, after: next.after };
}
