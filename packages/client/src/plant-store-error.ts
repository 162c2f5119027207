/**
 * What went wrong, as a caller decides what to do about it:
 * - `error-response`: the service answered with its Error body `{ error, message }`.
 * - `invalid-response`: an answer that breaks the contract: an error status without an Error
 *   body (a proxy's HTML 502), a body that is not JSON or not the documented shape, an
 *   unexpected status (a redirect), or a next-page link the client cannot follow.
 * - `invalid-input`: the client refused the arguments before sending anything.
 * - `network`: no answer arrived (connection refused or reset, DNS failure, ...).
 * - `timeout`: no complete answer within `timeoutMs`.
 * - `aborted`: the caller's `signal` aborted the call.
 */
export type PlantStoreErrorKind =
  | 'error-response'
  | 'invalid-response'
  | 'invalid-input'
  | 'network'
  | 'timeout'
  | 'aborted';

export interface PlantStoreErrorInit {
  readonly kind: PlantStoreErrorKind;
  readonly status: number;
  readonly error: number;
  readonly message: string;
  readonly retryAfterSeconds?: number | undefined;
  readonly cause?: unknown;
}

/**
 * Every failure of a client call. `status` is the HTTP status of the answer, or 0 when no
 * answer arrived (network, timeout, aborted) or nothing was sent (invalid-input). `error` is
 * the contract's error code: the Error body's `error` for an `error-response` (on
 * `POST /plants` it names the reason, 409 for a conflict, while `status` is 400); the HTTP
 * status for an error status without an Error body; 400 for `invalid-input`; otherwise 0.
 */
export class PlantStoreError extends Error {
  override readonly name = 'PlantStoreError';
  readonly kind: PlantStoreErrorKind;
  readonly status: number;
  readonly error: number;
  /** The answer's `Retry-After`, in seconds, when it carried one (503, 429). */
  readonly retryAfterSeconds?: number;

  constructor(init: PlantStoreErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind;
    this.status = init.status;
    this.error = init.error;
    if (init.retryAfterSeconds !== undefined) this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/** Whether `value` is a PlantStoreError: for `catch (error)` blocks, where `error` is `unknown`. */
export function isPlantStoreError(value: unknown): value is PlantStoreError {
  return value instanceof PlantStoreError;
}
