import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, int32Schema, int64Schema, isInt64 } from './int64.js';

// Written out, not derived from the constants: a wrong constant must fail these tests.
const ID_RANGE_MESSAGE = 'id must be an integer between -9223372036854775808 and 9223372036854775807';

const idSchema = int64Schema('id');

/** The messages valibot reports for `input`, or [] when it is accepted. */
function messagesFor(input: unknown, schema: v.GenericSchema = idSchema): string[] {
  const result = v.safeParse(schema, input);
  return result.success ? [] : result.issues.map((issue) => issue.message);
}

describe('int64 constants', () => {
  it('spans exactly the int64 and int32 ranges', () => {
    expect(INT64_MIN).toBe(-9223372036854775808n);
    expect(INT64_MAX).toBe(9223372036854775807n);
    expect(INT32_MIN).toBe(-2147483648);
    expect(INT32_MAX).toBe(2147483647);
  });
});

describe('isInt64', () => {
  it('accepts both ends of the range and refuses one past each end', () => {
    expect(isInt64(INT64_MIN)).toBe(true);
    expect(isInt64(INT64_MAX)).toBe(true);
    expect(isInt64(0n)).toBe(true);
    expect(isInt64(INT64_MIN - 1n)).toBe(false);
    expect(isInt64(INT64_MAX + 1n)).toBe(false);
  });
});

describe('int64Schema', () => {
  it.each([
    ['INT64_MIN', -9223372036854775808n],
    ['INT64_MAX', 9223372036854775807n],
    ['zero', 0n],
    ['2^53 + 1, which a JS number cannot hold', 9007199254740993n],
  ])('accepts the bigint %s and keeps it exact', (_label, id) => {
    const output = v.parse(idSchema, id);
    expect(typeof output).toBe('bigint');
    expect(output).toBe(id);
  });

  it.each([
    ['one below INT64_MIN', -9223372036854775809n],
    ['one above INT64_MAX', 9223372036854775808n],
    ['2^64', 2n ** 64n],
  ])('refuses the bigint %s with the range message', (_label, id) => {
    expect(messagesFor(id)).toEqual([ID_RANGE_MESSAGE]);
  });

  it.each([
    [0, 0n],
    [-0, 0n],
    [1, 1n],
    [-1, -1n],
    [42, 42n],
    [Number.MAX_SAFE_INTEGER, 9007199254740991n],
    [Number.MIN_SAFE_INTEGER, -9007199254740991n],
  ])('accepts the safe-integer number %d and outputs the bigint %d', (id, expected) => {
    const output = v.parse(idSchema, id);
    expect(typeof output).toBe('bigint');
    expect(output).toBe(expected);
  });

  it.each([
    // 2^53 and beyond may already have been rounded by whoever parsed them: refuse, never guess.
    ['2^53', 2 ** 53],
    ['2^53 + 2', 2 ** 53 + 2],
    ['-(2^53)', -(2 ** 53)],
    ['1e20', 1e20],
    ['a fraction', 1.5],
    ['a tiny fraction', 1e-7],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['-Infinity', Number.NEGATIVE_INFINITY],
    ['the string "1"', '1'],
    ['the string "9007199254740993"', '9007199254740993'],
    ['an empty string', ''],
    ['null', null],
    ['true', true],
    ['false', false],
    ['an object', { value: 1 }],
    ['an array', [1]],
  ])('refuses %s with the range message', (_label, id) => {
    expect(messagesFor(id)).toEqual([ID_RANGE_MESSAGE]);
  });

  it('says the field is required when the value is undefined', () => {
    expect(messagesFor(undefined)).toEqual(['id is required']);
  });

  it('names the given field in its messages', () => {
    const parentId = int64Schema('parentId');
    expect(messagesFor(2n ** 63n, parentId)).toEqual([
      'parentId must be an integer between -9223372036854775808 and 9223372036854775807',
    ]);
    expect(messagesFor(undefined, parentId)).toEqual(['parentId is required']);
  });
});

describe('int32Schema', () => {
  const statusCode = int32Schema('statusCode', 'An HTTP status', 100, 599);
  const latency = int32Schema('latencyMs', 'Milliseconds', 0);

  it('accepts a number or a bigint within its bounds and outputs a number', () => {
    expect(v.parse(statusCode, 100)).toBe(100);
    expect(v.parse(statusCode, 599n)).toBe(599);
    expect(v.parse(latency, INT32_MAX)).toBe(INT32_MAX);
    expect(v.parse(int32Schema('x', 'x'), INT32_MIN)).toBe(INT32_MIN);
  });

  it.each([
    ['below the minimum', 99],
    ['above the maximum', 600n],
    ['a fraction', 200.5],
    ['NaN', Number.NaN],
    ['a string', '200'],
    ['null', null],
  ])('refuses %s with the range message', (_label, input) => {
    expect(messagesFor(input, statusCode)).toEqual(['statusCode must be an integer between 100 and 599']);
  });

  it('refuses beyond int32 by default, and says a missing value is required', () => {
    expect(messagesFor(INT32_MAX + 1, latency)).toEqual(['latencyMs must be an integer between 0 and 2147483647']);
    expect(messagesFor(undefined, latency)).toEqual(['latencyMs is required']);
  });
});
