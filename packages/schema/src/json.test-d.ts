import type * as v from 'valibot';
import { describe, expectTypeOf, it } from 'vitest';
import { INT32_MAX, INT64_MAX, INT64_MIN, type int64Schema } from './int64.js';
import type { parseJson, stringifyJson } from './json.js';

describe('the exact JSON codec', () => {
  it('parseJson returns unknown: its result must be validated before use', () => {
    expectTypeOf<typeof parseJson>().toEqualTypeOf<(text: string) => unknown>();
  });

  it('stringifyJson takes anything and always returns a string', () => {
    expectTypeOf<typeof stringifyJson>().toEqualTypeOf<(value: unknown) => string>();
  });
});

describe('int64 helpers', () => {
  it('keep int64 values as bigint and int32 values as number', () => {
    expectTypeOf(INT64_MIN).toEqualTypeOf<bigint>();
    expectTypeOf(INT64_MAX).toEqualTypeOf<bigint>();
    expectTypeOf(INT32_MAX).toEqualTypeOf<number>();
  });

  it('int64Schema takes bigint or number and outputs bigint', () => {
    type Int64Schema = ReturnType<typeof int64Schema>;
    expectTypeOf<v.InferInput<Int64Schema>>().toEqualTypeOf<bigint | number>();
    expectTypeOf<v.InferOutput<Int64Schema>>().toEqualTypeOf<bigint>();
  });
});
