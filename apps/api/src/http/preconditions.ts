import { ErrorCode } from '@plant-store/schema';
import { ApiError } from './api-error.js';
import type { Int64Form } from './int64-form.js';

/** An `If-Match` / `If-None-Match` value: `*`, or the entity tags listed. */
export type EntityTags = '*' | readonly EntityTag[];

export interface EntityTag {
  readonly weak: boolean;
  /** Between the quotes. */
  readonly opaque: string;
}

/** The conditional headers a request sent, for the operations that honour them (RFC 9110 13.1). */
export interface RequestConditions {
  readonly ifMatch?: EntityTags;
  readonly ifNoneMatch?: EntityTags;
}

/** `"12"`, `W/"12"`, `"x y"`: an entity-tag of RFC 9110 8.8.3 (etagc: `!`, `#`-`~` and non-ASCII). */
const ENTITY_TAG = /^\s*(W\/)?"([\x21\x23-\x7e\x80-\uffff]*)"\s*(?:,|$)/;

/** The entity tags of a header value, or `*`; a 400 naming the header when it is neither. */
export function parseEntityTags(header: string, name: 'If-Match' | 'If-None-Match'): EntityTags {
  if (header.trim() === '*') return '*';
  const tags: EntityTag[] = [];
  let rest = header;
  while (rest.trim() !== '') {
    const match = ENTITY_TAG.exec(rest);
    if (match === null) {
      throw new ApiError(ErrorCode.InvalidRequest, `${name} must be * or a list of entity tags ("...", W/"...")`);
    }
    tags.push({ weak: match[1] !== undefined, opaque: match[2] ?? '' });
    rest = rest.slice(match[0].length);
  }
  return tags;
}

/**
 * The ETag of a version: a strong entity tag, its decimal; for an answer with int64s as strings
 * (Plant-Store-Int64: string), `"<version>-string"`, since those bytes differ (a strong tag
 * names one representation, RFC 9110 8.8.1).
 */
export function versionTag(version: bigint, form: Int64Form = 'number'): string {
  return form === 'string' ? `"${version}${STRING_FORM_SUFFIX}"` : `"${version}"`;
}

const STRING_FORM_SUFFIX = '-string';
/** A version's tag in either form: its decimal, then `-string` for the string form. */
const VERSION_TAG = /^(0|[1-9][0-9]{0,18})(-string)?$/;

/**
 * The versions `If-Match` names, by strong comparison (a weak tag never matches, RFC 9110
 * 13.1.1); undefined for `*` or no header (any version). A change depends on the plant's state,
 * not on the form its answer took: the tag of either form names its version. A tag that is no
 * version of ours is no version: the list may end up empty, and then nothing matches.
 */
export function ifMatchVersions(tags: EntityTags | undefined): readonly bigint[] | undefined {
  if (tags === undefined || tags === '*') return undefined;
  return tags.flatMap((tag) => {
    const match = tag.weak ? null : VERSION_TAG.exec(tag.opaque);
    return match === null ? [] : [BigInt(match[1] ?? '')];
  });
}

/**
 * Whether `If-None-Match` names `version` in the form the answer would take (weak comparison,
 * RFC 9110 13.1.2), or is `*`: then the client holds that very representation (304).
 */
export function noneMatchHolds(tags: EntityTags | undefined, version: bigint, form: Int64Form = 'number'): boolean {
  if (tags === undefined) return false;
  if (tags === '*') return true;
  const current = versionTag(version, form).slice(1, -1);
  return tags.some((tag) => tag.opaque === current);
}
