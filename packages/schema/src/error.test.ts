import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { ErrorCode, ErrorSchema } from './error.js';
import { parseJson } from './json.js';

const ERROR_MESSAGE = 'error must be an int32';

interface Refusal {
  path: string | null;
  message: string;
}

function refusalsFor(input: unknown): Refusal[] {
  const result = v.safeParse(ErrorSchema, input);
  if (result.success) return [];
  return result.issues.map((issue) => ({ path: v.getDotPath(issue), message: issue.message }));
}

describe('ErrorCode', () => {
  it('maps each reason to the HTTP status the contract decisions name', () => {
    expect(ErrorCode).toStrictEqual({
      InvalidRequest: 400,
      NotAuthenticated: 401,
      NotAllowed: 403,
      NotFound: 404,
      MethodNotAllowed: 405,
      Conflict: 409,
      Gone: 410,
      PreconditionFailed: 412,
      BodyTooLarge: 413,
      UnsupportedMediaType: 415,
      TooManyRequests: 429,
      Internal: 500,
      DatabaseUnavailable: 503,
    });
  });

  it('is listed in the description of `error`, which names no TypeScript constant (documents show it alone)', () => {
    const description = v.getDescription(ErrorSchema.entries.error) ?? '';
    expect(description).not.toContain('ErrorCode');
    expect(description).toBe(
      'Numeric error value: the HTTP status code of the precise reason: 400 invalid request, 401 not authenticated, 403 not allowed, 404 not found, 405 method not allowed, 409 conflict, 410 gone, 412 precondition failed, 413 body too large, 415 unsupported media type, 429 too many requests, 500 internal, 503 database unavailable.',
    );
  });

  it.each(Object.entries(ErrorCode))('%s (%d) is a valid Error body value', (_name, code) => {
    expect(v.parse(ErrorSchema, { error: code, message: 'x' }).error).toBe(code);
  });
});

describe('ErrorSchema', () => {
  it('accepts { error, message } and outputs exactly those keys', () => {
    const body = { error: 400, message: 'id must be an integer', stack: 'at secret.ts:1' };
    expect(v.parse(ErrorSchema, body)).toStrictEqual({
      error: 400,
      message: 'id must be an integer',
    });
  });

  it.each([
    ['INT32_MIN', -2147483648],
    ['INT32_MAX', 2147483647],
    ['zero', 0],
  ])('accepts error = %s', (_label, error) => {
    expect(v.parse(ErrorSchema, { error, message: 'x' }).error).toBe(error);
  });

  it.each([
    ['one below INT32_MIN', -2147483649],
    ['one above INT32_MAX', 2147483648],
    ['2^53', 2 ** 53],
    ['a fraction', 400.5],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['the string "400"', '400'],
    ['null', null],
    ['a boolean', true],
  ])('refuses error = %s', (_label, error) => {
    // Infinity breaks two rules (integer, maximum) and gets the same message twice: compare sets.
    const refusals = refusalsFor({ error, message: 'x' });
    expect(refusals.length).toBeGreaterThan(0);
    expect(new Set(refusals.map(({ path, message }) => `${path}: ${message}`))).toEqual(
      new Set([`error: ${ERROR_MESSAGE}`]),
    );
  });

  it('refuses a body without error', () => {
    expect(refusalsFor({ message: 'x' }).map((refusal) => refusal.path)).toEqual(['error']);
  });

  it('refuses a body without message', () => {
    expect(refusalsFor({ error: 400 }).map((refusal) => refusal.path)).toEqual(['message']);
  });

  it.each([
    ['a number', 400],
    ['null', null],
    ['an object', { text: 'x' }],
  ])('refuses a message that is %s', (_label, message) => {
    expect(refusalsFor({ error: 400, message })).toEqual([{ path: 'message', message: 'message must be a string' }]);
  });
});

describe('ErrorSchema on a body read with parseJson', () => {
  it('accepts the bigint that the exact codec yields and outputs a number', () => {
    expect(v.parse(ErrorSchema, parseJson('{"error": 409, "message": "conflict"}'))).toEqual({
      error: 409,
      message: 'conflict',
    });
  });

  it('refuses a bigint beyond int32', () => {
    expect(v.safeParse(ErrorSchema, parseJson('{"error": 2147483648, "message": "x"}')).success).toBe(false);
  });
});
