import { ErrorCode } from '@plant-store/schema';
import { ApiError } from './api-error.js';

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

/** The ETag of a version: a strong entity tag, its decimal. */
export function versionTag(version: bigint): string {
  return `"${version}"`;
}

const DECIMAL = /^(0|[1-9][0-9]{0,18})$/;

/**
 * The versions `If-Match` names, by strong comparison (a weak tag never matches, RFC 9110
 * 13.1.1); undefined for `*` or no header (any version). A tag that is no version of ours is no
 * version: the list may end up empty, and then nothing matches.
 */
export function ifMatchVersions(tags: EntityTags | undefined): readonly bigint[] | undefined {
  if (tags === undefined || tags === '*') return undefined;
  return tags.filter((tag) => !tag.weak && DECIMAL.test(tag.opaque)).map((tag) => BigInt(tag.opaque));
}

/** Whether `If-None-Match` names `version` (weak comparison, RFC 9110 13.1.2), or is `*`. */
export function noneMatchHolds(tags: EntityTags | undefined, version: bigint): boolean {
  if (tags === undefined) return false;
  if (tags === '*') return true;
  const current = version.toString();
  return tags.some((tag) => tag.opaque === current);
}
