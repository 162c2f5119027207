import type * as v from 'valibot';
import { describe, expectTypeOf, it } from 'vitest';
import type { ErrorBody, ErrorCode, ErrorSchema } from './error.js';

describe('ErrorBody', () => {
  it('is { error: number; message: string }', () => {
    expectTypeOf<ErrorBody>().toEqualTypeOf<{ error: number; message: string }>();
    expectTypeOf<v.InferOutput<typeof ErrorSchema>>().toEqualTypeOf<ErrorBody>();
  });
});

describe('ErrorCode', () => {
  it('is the union of the HTTP statuses the service answers', () => {
    expectTypeOf<ErrorCode>().toEqualTypeOf<
      400 | 401 | 403 | 404 | 405 | 409 | 410 | 412 | 413 | 415 | 429 | 500 | 503
    >();
    expectTypeOf<ErrorCode>().toExtend<ErrorBody['error']>();
  });
});
