import { ErrorCode } from '@plant-store/schema';

/**
 * Turns stack capture off until restoreStackTraces(): an ApiError is an answer, not a bug, and
 * capturing a stack costs more than the rest of a 400's handling. Returns its argument, so that
 * it can run inside `super(...)`'s argument list, before the Error constructor captures.
 */
function skipStackTrace<T>(value: T): T {
  savedStackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  return value;
}
function restoreStackTraces(): void {
  Error.stackTraceLimit = savedStackTraceLimit;
}
let savedStackTraceLimit = Error.stackTraceLimit;

/**
 * A failure with a contract `error` code. Thrown anywhere; rendered only by the error
 * middleware. `status` defaults to the code itself. Carries no stack trace (see skipStackTrace);
 * an unexpected error keeps its own, as `cause` or on its own.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: { status?: number; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(skipStackTrace(message), options.cause === undefined ? undefined : { cause: options.cause });
    restoreStackTraces();
    this.status = options.status ?? code;
    this.headers = options.headers ?? {};
  }
}

export function invalidRequest(message: string): ApiError {
  return new ApiError(ErrorCode.InvalidRequest, message);
}

/** What an error response is made of: an ApiError's answer, without the error. */
export type ErrorAnswer = Pick<ApiError, 'code' | 'status' | 'headers' | 'message'>;

const NO_HEADERS: Readonly<Record<string, string>> = {};

/**
 * invalidRequest's answer without making an error (nothing to throw or trace): for a refusal
 * answered where it is found, on a hot path.
 */
export function invalidRequestAnswer(message: string): ErrorAnswer {
  return { code: ErrorCode.InvalidRequest, status: ErrorCode.InvalidRequest, headers: NO_HEADERS, message };
}
