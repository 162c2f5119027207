import * as v from 'valibot';
import { INT32_MAX, INT32_MIN } from './int64.js';

/**
 * The `error` values the service answers: the matching HTTP status code of the precise reason.
 * `POST /plants` answers HTTP 400 for every client fault, with `error` naming the reason
 * (400, 409, 413 or 415); authentication answers 401/403 as the HTTP status too.
 */
export const ErrorCode = {
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
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const INT32_MESSAGE = 'error must be an int32';

/** `400 invalid request, 401 not authenticated, ...`: the codes, named as ErrorCode names them. */
const CODES_LISTED = Object.entries(ErrorCode)
  .map(([name, code]) => `${code} ${name.replaceAll(/(?<=[a-z])(?=[A-Z])/g, ' ').toLowerCase()}`)
  .join(', ');

/**
 * The spec's Error: `{ error: int32, message: string }`. `error` may arrive as a number (plain
 * `JSON.parse`) or a bigint (this package's `parseJson`); it comes out as a number.
 */
export const ErrorSchema = v.object({
  error: v.pipe(
    v.union([v.pipe(v.number(INT32_MESSAGE), v.integer(INT32_MESSAGE)), v.bigint(INT32_MESSAGE)], INT32_MESSAGE),
    v.metadata({ format: 'int32', minimum: INT32_MIN, maximum: INT32_MAX }),
    v.description(`Numeric error value: the HTTP status code of the precise reason: ${CODES_LISTED}.`),
    v.check((value) => value >= INT32_MIN && value <= INT32_MAX, INT32_MESSAGE),
    v.transform(Number),
  ),
  message: v.pipe(
    v.string('message must be a string'),
    v.description('Error message: one sentence naming the field or rule that failed.'),
  ),
});
export type ErrorBody = v.InferOutput<typeof ErrorSchema>;
