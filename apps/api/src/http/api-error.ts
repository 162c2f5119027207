import { ErrorCode } from '@plant-store/schema';

/**
 * A failure with a contract `error` code. Thrown anywhere; rendered only by the error
 * middleware. `status` defaults to the code itself.
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
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = options.status ?? code;
    this.headers = options.headers ?? {};
  }
}

export function invalidRequest(message: string): ApiError {
  return new ApiError(ErrorCode.InvalidRequest, message);
}
