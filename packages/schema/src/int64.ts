import * as v from 'valibot';

/** The int64 range, as bigints: ids never pass through a JS `number`. */
export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

export const INT32_MIN = -(2 ** 31);
export const INT32_MAX = 2 ** 31 - 1;

/** Whether `value` is a bigint inside the int64 range. */
export function isInt64(value: bigint): boolean {
  return value >= INT64_MIN && value <= INT64_MAX;
}

/**
 * An int64 field, named `field` in its messages. Accepts a bigint (what the exact JSON codec
 * yields for every integer) or a safe-integer number (what plain `JSON.parse` yields for small
 * ids), and outputs a bigint. Fractions, numbers beyond 2^53 (already rounded by whoever parsed
 * them), strings and out-of-range values are refused. `description` documents it in JSON Schema.
 */
export function int64Schema(field: string, description = `${field}: an int64`) {
  const message = `${field} must be an integer between ${INT64_MIN} and ${INT64_MAX}`;
  return v.pipe(
    v.union([v.bigint(message), v.pipe(v.number(message), v.safeInteger(message))], (issue) =>
      issue.input === undefined ? `${field} is required` : message,
    ),
    // For JSON Schema / OpenAPI: on the wire this is one JSON integer of format int64.
    v.metadata({ format: 'int64' }),
    v.description(description),
    v.transform((value): bigint => BigInt(value)),
    v.check(isInt64, message),
  );
}

/**
 * An int32 field, named `field` in its messages, between `minimum` and `maximum` (both within
 * int32). Accepts a number (plain `JSON.parse`) or a bigint (this package's `parseJson`) and
 * outputs a number. `description` documents it in JSON Schema.
 */
export function int32Schema(field: string, description: string, minimum = INT32_MIN, maximum = INT32_MAX) {
  const message = `${field} must be an integer between ${minimum} and ${maximum}`;
  return v.pipe(
    v.union([v.pipe(v.number(message), v.integer(message)), v.bigint(message)], (issue) =>
      issue.input === undefined ? `${field} is required` : message,
    ),
    v.metadata({ format: 'int32', minimum, maximum }),
    v.description(description),
    v.check((value) => value >= minimum && value <= maximum, message),
    v.transform(Number),
  );
}
