import * as v from 'valibot';

/** RFC 3339 `date-time` (section 5.6): full date, `T`, full time with a `Z` or numeric offset. */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt]([01]\d|2[0-3]):([0-5]\d):([0-5]\d|60)(?:\.\d+)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;

/**
 * Whether `text` is an RFC 3339 date-time naming a real calendar day. (`Date.parse` is no
 * judge: it reads `2024-02-30` as March 1st, and accepts forms RFC 3339 does not.)
 */
export function isRfc3339DateTime(text: string): boolean {
  const match = DATE_TIME.exec(text);
  if (!match) return false;
  const [, year = '', month = '', day = ''] = match;
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  return date.getUTCMonth() === Number(month) - 1 && date.getUTCDate() === Number(day);
}

/**
 * A point in time on the wire: an RFC 3339 date-time string (the service writes UTC with
 * milliseconds, `2026-11-23T10:48:07.123Z`). It stays a string: `new Date(value)` reads it.
 */
export function timestampSchema(field: string, description: string) {
  const message = `${field} must be an RFC 3339 date-time string`;
  return v.pipe(
    v.string((issue) => (issue.input === undefined ? `${field} is required` : message)),
    v.description(description),
    v.metadata({ format: 'date-time' }),
    v.check(isRfc3339DateTime, message),
  );
}
