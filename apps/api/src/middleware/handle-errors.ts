import { DatabaseUnavailableError, ImportRejectedError, PlantConflictError } from '@plant-store/db';
import { ErrorCode } from '@plant-store/schema';
import type { Middleware } from 'koa';
import { ApiError, type ErrorAnswer } from '../http/api-error.js';
import type { AppContext, AppState } from '../http/app-state.js';
import { bodyStillArriving, closeAfterAnswerUnlessBodyArrived } from '../http/close-after-answer.js';
import { respondJsonText } from '../http/respond-json.js';

/** Seconds a client should wait before retrying when the database is unavailable. */
const RETRY_AFTER_SECONDS = '1';

/** `error` codes that mean "the client sent something wrong" (see AppState.clientFaultStatus). */
const CLIENT_FAULT_CODES: ReadonlySet<number> = new Set([
  ErrorCode.InvalidRequest,
  ErrorCode.Conflict,
  ErrorCode.BodyTooLarge,
  ErrorCode.UnsupportedMediaType,
]);

const KNOWN_CODES: ReadonlySet<number> = new Set(Object.values(ErrorCode));

function isErrorCode(status: number): status is ErrorCode {
  return KNOWN_CODES.has(status);
}

/**
 * The one place that writes error responses. First in the chain: every failure below it, thrown
 * or left as a bare status (unknown path, method not allowed), leaves as `{ error, message }`.
 * An answer given before the request's body has arrived (a refusal before or while reading it)
 * closes the connection after it rather than reading the rest (see closeAfterAnswerUnlessBodyArrived).
 */
export function handleErrors(): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status >= 400 && ctx.body == null) throw errorForBareStatus(ctx);
    } catch (error) {
      const apiError = toApiError(error);
      if (apiError.code >= 500 && apiError.code !== ErrorCode.DatabaseUnavailable) {
        ctx.app.emit('error', error, ctx);
      }
      respondError(ctx, apiError);
    }
    if (bodyStillArriving(ctx.req)) await closeAfterAnswerUnlessBodyArrived(ctx.req, ctx.res);
  };
}

/**
 * Writes `apiError` as the response, as the error middleware does with what it catches. For a
 * route's own refusals on hot paths (an invalid body), where throwing through every middleware
 * frame would cost more than the rest of the answer.
 */
export function respondError(ctx: AppContext, apiError: ErrorAnswer): void {
  const faultStatus = ctx.state.clientFaultStatus;
  const status = faultStatus !== undefined && CLIENT_FAULT_CODES.has(apiError.code) ? faultStatus : apiError.status;
  for (const [name, value] of Object.entries(apiError.headers)) ctx.res.setHeader(name, value);
  // Both fields are a number and a string: JSON.stringify writes them exactly.
  respondJsonText(ctx, status, JSON.stringify({ error: apiError.code, message: apiError.message }));
}

function errorForBareStatus(ctx: AppContext): ApiError {
  switch (ctx.status) {
    case 404:
      return notFound(ctx);
    case 405:
    // @koa/router answers 501 for a method it implements nowhere (PROPFIND): to the client, that
    // is another method on a known path, which the contract answers with 405. It answers so for
    // any path, known or not: a path no route matches (no method allowed) is a 404 for every method.
    case 501:
      if (ctx.response.get('Allow') === '') return notFound(ctx);
      return new ApiError(
        ErrorCode.MethodNotAllowed,
        `method ${ctx.method} is not allowed on ${shownPath(ctx.path)}; allowed: ${ctx.response.get('Allow')}`,
        { status: 405 },
      );
    default:
      return new ApiError(
        isErrorCode(ctx.status) ? ctx.status : ErrorCode.Internal,
        `request failed with status ${ctx.status}`,
        {
          status: ctx.status,
        },
      );
  }
}

function notFound(ctx: AppContext): ApiError {
  ctx.remove('Allow');
  return new ApiError(ErrorCode.NotFound, `no route for ${ctx.method} ${shownPath(ctx.path)}`, { status: 404 });
}

/** Most characters of a request path a message repeats: enough to recognise it, not a 16 KB echo. */
export const MAX_SHOWN_PATH_LENGTH = 120;

/** The path as a message shows it: whole when short, else its start and how long it was. */
export function shownPath(path: string): string {
  if (path.length <= MAX_SHOWN_PATH_LENGTH) return path;
  return `${path.slice(0, MAX_SHOWN_PATH_LENGTH)}... (${path.length} characters)`;
}

/** http-errors style errors (Koa's ctx.throw, libraries): what we read of them. */
interface HttpLikeError {
  status?: unknown;
  expose?: unknown;
  message: string;
}

function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof PlantConflictError) return new ApiError(ErrorCode.Conflict, error.message);
  // An import's line that breaks a rule across lines or against the stored plants: its message names the line.
  if (error instanceof ImportRejectedError) return new ApiError(ErrorCode.InvalidRequest, error.message);
  if (error instanceof DatabaseUnavailableError) {
    return new ApiError(ErrorCode.DatabaseUnavailable, 'the database is unavailable; retry shortly', {
      headers: { 'Retry-After': RETRY_AFTER_SECONDS },
    });
  }
  if (error instanceof Error) {
    const httpError: HttpLikeError = error;
    if (typeof httpError.status === 'number' && httpError.status >= 400 && httpError.status < 500 && httpError.expose) {
      const code = isErrorCode(httpError.status) ? httpError.status : ErrorCode.InvalidRequest;
      return new ApiError(code, firstSentence(httpError.message), { status: httpError.status });
    }
  }
  return new ApiError(ErrorCode.Internal, 'internal error');
}

function firstSentence(message: string): string {
  return message.split('\n')[0]?.toLowerCase() ?? 'bad request';
}
