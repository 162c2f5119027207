import { describe, expect, it } from 'vitest';
import { DatabaseUnavailableError } from './errors.js';
import { isUnavailable, translateError } from './prisma-errors.js';

const withCode = (code: string) => Object.assign(new Error('driver error'), { code });

describe('isUnavailable', () => {
  it.each([
    ['a refused connection', withCode('ECONNREFUSED')],
    ['a server shutting down', withCode('57P01')],
    ['a dropped connection (no code, only its message)', new Error('Connection terminated unexpectedly')],
    ['a pool that could not hand out a connection in time', new Error('timeout exceeded when trying to connect')],
    ['a query the server stopped answering', new Error('Query read timeout')],
    ['a cause two levels down', new Error('outer', { cause: new Error('middle', { cause: withCode('ECONNRESET') }) })],
    [
      'the adapter error Prisma keeps in meta',
      Object.assign(new Error('P2010'), { meta: { driverAdapterError: withCode('57P03') } }),
    ],
  ])('recognises %s', (_label, error) => {
    expect(isUnavailable(error)).toBe(true);
    expect(translateError(error)).toBeInstanceOf(DatabaseUnavailableError);
  });

  it.each([
    ['a unique violation', withCode('23505')],
    ['a value too long', withCode('22001')],
    ['a plain bug', new TypeError('x is not a function')],
    ['a message that merely contains the words', new Error('Connection terminated unexpectedly? no: user text')],
    ['a non-error', 'Connection terminated'],
  ])('leaves %s alone', (_label, error) => {
    expect(isUnavailable(error)).toBe(false);
    expect(translateError(error)).toBe(error);
  });

  it('stops on a cause cycle', () => {
    const error: Error & { cause?: unknown } = new Error('loop');
    error.cause = error;
    expect(isUnavailable(error)).toBe(false);
  });
});
