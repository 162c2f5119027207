import type { Readable } from 'node:stream';
import { ErrorCode, JsonTooDeepError, MAX_JSON_DEPTH, parseJson } from '@plant-store/schema';
import type { Middleware } from 'koa';
import bodyParser from 'koa-bodyparser';
import { ApiError, invalidRequest } from '../http/api-error.js';
import type { AppContext, AppState } from '../http/app-state.js';
import { ABORTED_MESSAGE, bodyTooLargeMessage, CONTENT_ENCODING_MESSAGE, decodedBody } from '../http/decoded-body.js';

export { bodyTooLargeMessage, CONTENT_ENCODING_MESSAGE };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The 415 for a body that is not `Content-Type: application/json`. */
export const NOT_JSON_MESSAGE = 'request body must be JSON sent as Content-Type: application/json';

/** The 415 for a body of an operation that takes other JSON media types too. */
export function notJsonMessage(mediaTypes: readonly string[]): string {
  return mediaTypes.length === 1 && mediaTypes[0] === 'application/json'
    ? NOT_JSON_MESSAGE
    : `request body must be JSON sent as Content-Type: ${mediaTypes.join(' or ')}`;
}

/** The 400 for a body nested deeper than the JSON codec reads (`MAX_JSON_DEPTH`). */
export const TOO_DEEP_MESSAGE = `request body is nested too deep: at most ${MAX_JSON_DEPTH} levels of arrays and objects`;

/** Content-Type values that need no parsing: JSON, in UTF-8 (the default or said so). */
const COMMON_JSON_TYPES: ReadonlySet<string> = new Set([
  'application/json',
  'application/json; charset=utf-8',
  'application/json;charset=utf-8',
  'application/json; charset=UTF-8',
  'application/json;charset=UTF-8',
]);

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads a JSON object body into `ctx.state.jsonBody`, numbers exact (int64 ids as bigint).
 * koa-bodyparser reads the bytes (limit, Content-Length); a body with a Content-Encoding is
 * decoded first by decodedBody (its errors are the contract's, and a failed decoding can never
 * take the process down), and koa-bodyparser reads the decoded stream. The exact codec parses
 * the bytes, because JSON.parse would round ids beyond 2^53.
 */
export function jsonBody(options: {
  limitBytes: number;
  /** The JSON media types taken (default `application/json` alone). */
  mediaTypes?: readonly string[];
  /** A request without a body (no Content-Length, Transfer-Encoding or Content-Type, or an empty one) reads as `{}`. */
  optional?: boolean;
}): Middleware<AppState> {
  const mediaTypes = options.mediaTypes ?? ['application/json'];
  const notJson = notJsonMessage(mediaTypes);
  // Raw bytes (no `encoding`): invalid UTF-8 is refused below rather than silently replaced.
  const readOptions: bodyParser.Options & { encoding: null } = {
    enableTypes: ['text'],
    extendTypes: { text: [...mediaTypes] },
    textLimit: String(options.limitBytes),
    encoding: null,
  };
  const readBody = bodyParser(readOptions);

  return async (ctx, next) => {
    const { headers } = ctx.req;
    // No body at all, or an empty one (koa's length is the Content-Length; without one, a body needs Transfer-Encoding).
    const length = ctx.request.length;
    if (options.optional && (length === 0 || (length === undefined && headers['transfer-encoding'] === undefined))) {
      ctx.state.jsonBody = {};
      return next();
    }
    if (COMMON_JSON_TYPES.has(headers['content-type'] ?? '')) {
      // The usual header, spelled exactly: no media-type parsing needed. As type-is's hasBody:
      // a body is announced by Transfer-Encoding or by a Content-Length.
      const announced = headers['transfer-encoding'] !== undefined || headers['content-length'] !== undefined;
      if (!announced || ctx.request.length === 0) throw invalidRequest('request body is missing');
    } else {
      const type = ctx.request.is(...mediaTypes);
      // null: no body at all (neither Content-Length nor Transfer-Encoding); or an empty one.
      if (type === null || ctx.request.length === 0) throw invalidRequest('request body is missing');
      if (type === false) {
        throw new ApiError(ErrorCode.UnsupportedMediaType, notJson);
      }
      const charset = ctx.request.charset.toLowerCase();
      if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') {
        throw new ApiError(ErrorCode.UnsupportedMediaType, `request body must be UTF-8, not ${charset}`);
      }
    }
    try {
      // The usual body, identity: koa-bodyparser reads the request itself, as it always did.
      await readBody(
        headers['content-encoding'] === undefined
          ? ctx
          : readingFrom(ctx, decodedBody(ctx.req, { maxBytes: options.limitBytes })),
        noNext,
      );
    } catch (error) {
      throw toBodyReadError(error, ctx);
    }
    const raw = ctx.request.body;
    if (!(raw instanceof Uint8Array)) throw invalidRequest('request body is missing');
    let text: string;
    try {
      text = utf8.decode(raw);
    } catch {
      throw invalidRequest('request body is not valid UTF-8');
    }
    let body: unknown;
    try {
      body = parseJson(text);
    } catch (error) {
      // Checked before parsing, so a deep body never reaches the recursive parser.
      if (error instanceof JsonTooDeepError) throw invalidRequest(TOO_DEEP_MESSAGE);
      throw invalidRequest(`request body is not valid JSON: ${error instanceof Error ? error.message : 'parse error'}`);
    }
    if (!isJsonObject(body)) throw invalidRequest('request body must be a JSON object');
    ctx.state.jsonBody = body;
    await next();
  };
}

async function noNext(): Promise<void> {}

/**
 * The context koa-bodyparser reads a decoded body from: it reads `ctx.req`, here the decoded
 * stream, without headers of its own (the request's describe the encoded bytes: co-body would
 * hold the decoded length to the Content-Length, and inflation would decode it again). Everything
 * else is the request's context, where the body read is left (`ctx.request.body`).
 */
function readingFrom(ctx: AppContext, decoded: Readable): AppContext {
  return Object.create(ctx, { req: { value: Object.assign(decoded, { headers: {} }) } }) as AppContext;
}

/** What raw-body (inside koa-bodyparser) throws while reading a body. */
interface BodyReadFailure {
  type?: unknown;
  limit?: unknown;
}

/**
 * The client's failures to send a readable body, as contract errors: over the limit, cut short
 * (also before it was read: its connection gone while the token was checked), or a length that
 * lies. decodedBody's errors are the contract's already. Anything else is returned unchanged.
 */
function toBodyReadError(error: unknown, ctx: AppContext): unknown {
  if (error instanceof ApiError) return error;
  const failure: BodyReadFailure = typeof error === 'object' && error !== null ? error : {};
  switch (failure.type) {
    case 'entity.too.large':
      return new ApiError(ErrorCode.BodyTooLarge, bodyTooLargeMessage(String(failure.limit)));
    case 'request.aborted':
      return invalidRequest(ABORTED_MESSAGE);
    case 'request.size.invalid':
      return invalidRequest('request body length does not match Content-Length');
    case 'stream.not.readable':
      if (ctx.req.destroyed) return invalidRequest(ABORTED_MESSAGE);
  }
  return error;
}
