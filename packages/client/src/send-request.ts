import { ErrorSchema, parseJson } from '@plant-store/schema';
import * as v from 'valibot';
import type { OperationTarget } from './client-context.js';
import { PlantStoreError } from './plant-store-error.js';
import { parseRetryAfter, type RetryPolicy, retryDelayMs, sleep } from './retry-policy.js';

/**
 * When a failed attempt may be sent again:
 * - `idempotent`: sending it twice has the effect of sending it once (reads, and creates, which
 *   are idempotent by id). Retried on network errors, timeouts, 429, 502, 503 and 504, from the
 *   service or from a gateway.
 * - `unprocessed-only`: retried only when the service itself answered its Error body with
 *   `error` 503 or 429. Any other failure may have come after the request took effect: a lost
 *   answer, a timeout, a gateway's 502/503/504 (it may have forwarded the request).
 */
export type RetryMode = 'idempotent' | 'unprocessed-only';

export interface Transport {
  readonly fetch: typeof fetch;
  readonly token: string;
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
}

/** An operation's method, URL and success status (any other status is an error), and how to send it. */
export interface PlantStoreRequest extends OperationTarget {
  /** JSON text, written with the schema package's `stringifyJson`. */
  readonly body?: string;
  /** Headers of the operation's own (preconditions: `If-Match`), sent as given. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly retryMode: RetryMode;
  /**
   * On a retry only (attempt 2 and later): whether this error means an earlier attempt already
   * did what was asked (a delete's retry answered 404: the plant is gone). `sendRequest` then
   * resolves with `{ status: error.status, headers: new Headers(), body: undefined }`.
   */
  readonly doneByEarlierAttempt?: (error: PlantStoreError) => boolean;
  readonly signal?: AbortSignal | undefined;
}

export interface PlantStoreAnswer {
  readonly status: number;
  readonly headers: Headers;
  /** The body read with `parseJson` (ids as bigint); undefined for 204. Not validated yet. */
  readonly body: unknown;
}

/** HTTP statuses retried for `idempotent` requests, with or without the service's Error body. */
const IDEMPOTENT_RETRIED_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);
/** Error codes of the service's own Error body that say it did not act: `unprocessed-only` retries these only. */
const UNPROCESSED_ERROR_CODES: ReadonlySet<number> = new Set([429, 503]);

/** Sends `request`, retrying as its `retryMode` allows, and returns the success answer or throws a PlantStoreError. */
export async function sendRequest(transport: Transport, request: PlantStoreRequest): Promise<PlantStoreAnswer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await sendAttempt(transport, request);
    } catch (error) {
      if (attempt > 1 && error instanceof PlantStoreError && request.doneByEarlierAttempt?.(error)) {
        return { status: error.status, headers: new Headers(), body: undefined };
      }
      if (!(error instanceof PlantStoreError) || attempt >= transport.retry.attempts || !isRetried(error, request)) {
        throw error;
      }
      const delay = retryDelayMs(transport.retry, attempt, error.retryAfterSeconds);
      try {
        await sleep(delay, request.signal);
      } catch (reason) {
        throw abortedError(request, reason);
      }
    }
  }
}

function isRetried(error: PlantStoreError, request: PlantStoreRequest): boolean {
  if (request.retryMode === 'unprocessed-only') {
    return error.kind === 'error-response' && UNPROCESSED_ERROR_CODES.has(error.error);
  }
  if (error.kind === 'network' || error.kind === 'timeout') return true;
  if (error.kind === 'error-response' || error.kind === 'invalid-response') {
    return IDEMPOTENT_RETRIED_STATUSES.has(error.status);
  }
  return false;
}

async function sendAttempt(transport: Transport, request: PlantStoreRequest): Promise<PlantStoreAnswer> {
  const deadline = startDeadline(transport.timeoutMs, request.signal);
  try {
    const headers = new Headers({
      ...request.headers,
      Accept: 'application/json',
      Authorization: `Bearer ${transport.token}`,
    });
    if (request.body !== undefined) headers.set('Content-Type', 'application/json');
    const response = await transport.fetch(request.url, {
      method: request.method,
      headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      signal: deadline.signal,
      // Never follow a redirect: it would take the bearer token somewhere the caller did not name.
      redirect: 'manual',
    });
    // The deadline covers the body too: a server that stalls mid-body times out.
    const text = await response.text();
    if (response.status === request.successStatus) {
      return { status: response.status, headers: response.headers, body: readSuccessBody(request, response, text) };
    }
    throw errorFromAnswer(request, response, text);
  } catch (error) {
    if (error instanceof PlantStoreError) throw error;
    throw transportError(request, deadline, error);
  } finally {
    deadline.dispose();
  }
}

function readSuccessBody(request: PlantStoreRequest, response: Response, text: string): unknown {
  if (request.successStatus === 204) return undefined;
  try {
    return parseJson(text);
  } catch (cause) {
    throw new PlantStoreError({
      kind: 'invalid-response',
      status: response.status,
      error: 0,
      message: `${describeRequest(request)} answered ${response.status} with a body that is not JSON: ${excerpt(text)}`,
      cause,
    });
  }
}

/** The error for an answer other than the success status: the service's Error body when it sent one. */
export function errorFromAnswer(request: PlantStoreRequest, response: Response, text: string): PlantStoreError {
  const retryAfterSeconds = parseRetryAfter(response.headers.get('Retry-After'));
  const status = response.status;
  const errorBody = status >= 400 ? readErrorBody(text) : undefined;
  if (errorBody) {
    return new PlantStoreError({
      kind: 'error-response',
      status,
      error: errorBody.error,
      message: errorBody.message,
      retryAfterSeconds,
    });
  }
  const location = response.headers.get('Location');
  const what = status >= 400 ? 'without an Error body' : `where ${request.successStatus} was expected`;
  return new PlantStoreError({
    kind: 'invalid-response',
    status,
    error: status >= 400 ? status : 0,
    message:
      `${describeRequest(request)} answered ${status} ${what}` +
      (location === null ? '' : ` (Location: ${location})`) +
      (text === '' ? '' : `: ${excerpt(text)}`),
    retryAfterSeconds,
  });
}

function readErrorBody(text: string): v.InferOutput<typeof ErrorSchema> | undefined {
  let json: unknown;
  try {
    json = parseJson(text);
  } catch {
    return undefined;
  }
  const result = v.safeParse(ErrorSchema, json);
  return result.success ? result.output : undefined;
}

interface Deadline {
  readonly signal: AbortSignal;
  readonly timedOut: () => boolean;
  readonly dispose: () => void;
}

/** One attempt's signal: aborts after `timeoutMs`, or when the caller's signal aborts. */
function startDeadline(timeoutMs: number, callerSignal: AbortSignal | undefined): Deadline {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError'));
  }, timeoutMs);
  const onCallerAbort = () => controller.abort(callerSignal?.reason);
  if (callerSignal?.aborted) onCallerAbort();
  else callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    dispose: () => {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
    },
  };
}

function transportError(request: PlantStoreRequest, deadline: Deadline, cause: unknown): PlantStoreError {
  if (request.signal?.aborted) return abortedError(request, request.signal.reason);
  if (deadline.timedOut()) {
    return new PlantStoreError({
      kind: 'timeout',
      status: 0,
      error: 0,
      message: `${describeRequest(request)} timed out: ${deadline.signal.reason instanceof Error ? deadline.signal.reason.message : 'no answer'}`,
      cause,
    });
  }
  return new PlantStoreError({
    kind: 'network',
    status: 0,
    error: 0,
    message: `${describeRequest(request)} failed: ${causeMessage(cause)}`,
    cause,
  });
}

export function abortedError(request: PlantStoreRequest, cause: unknown): PlantStoreError {
  return new PlantStoreError({
    kind: 'aborted',
    status: 0,
    error: 0,
    message: `${describeRequest(request)} was aborted`,
    cause,
  });
}

/** `GET /plants?limit=20`: what the messages name. The token is in a header, never in the URL. */
export function describeRequest(request: Pick<PlantStoreRequest, 'method' | 'url'>): string {
  return `${request.method} ${request.url.pathname}${request.url.search}`;
}

/** `fetch failed (connect ECONNREFUSED 127.0.0.1:9)`: fetch's own message says little, its cause says why. */
function causeMessage(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  return cause.cause instanceof Error ? `${cause.message} (${cause.cause.message})` : cause.message;
}

/** The start of a body for a message: one line, at most 200 characters. */
function excerpt(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 200)}...` : line;
}
