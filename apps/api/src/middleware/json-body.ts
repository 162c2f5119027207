import { ErrorCode, JsonTooDeepError, MAX_JSON_DEPTH, parseJson } from '@plant-store/schema';
import type { Middleware } from 'koa';
import bodyParser from 'koa-bodyparser';
import { ApiError, invalidRequest } from '../http/api-error.js';
import type { AppState } from '../http/app-state.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The 415 for a body that is not `Content-Type: application/json`. */
export const NOT_JSON_MESSAGE = 'request body must be JSON sent as Content-Type: application/json';

/** The 400 for a body nested deeper than the JSON codec reads (`MAX_JSON_DEPTH`). */
export const TOO_DEEP_MESSAGE = `request body is nested too deep: at most ${MAX_JSON_DEPTH} levels of arrays and objects`;

/** The 415 for a Content-Encoding inflation (in koa-bodyparser) cannot decode. */
export const CONTENT_ENCODING_MESSAGE =
  'request body Content-Encoding is not supported; send identity, gzip, deflate or br (one of them, not a list)';

/** The 413 for a body over the limit. */
export function bodyTooLargeMessage(limitBytes: number | string): string {
  return `request body is larger than the limit of ${limitBytes} bytes`;
}

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
 * koa-bodyparser reads the bytes (limit, Content-Length, content encodings); the exact codec
 * parses them, because JSON.parse would round ids beyond 2^53.
 */
export function jsonBody(options: { limitBytes: number }): Middleware<AppState> {
  // Raw bytes (no `encoding`): invalid UTF-8 is refused below rather than silently replaced.
  const readOptions: bodyParser.Options & { encoding: null } = {
    enableTypes: ['text'],
    extendTypes: { text: ['application/json'] },
    textLimit: String(options.limitBytes),
    encoding: null,
  };
  const readBody = bodyParser(readOptions);

  return async (ctx, next) => {
    const { headers } = ctx.req;
    if (COMMON_JSON_TYPES.has(headers['content-type'] ?? '')) {
      // The usual header, spelled exactly: no media-type parsing needed. As type-is's hasBody:
      // a body is announced by Transfer-Encoding or by a Content-Length.
      const announced = headers['transfer-encoding'] !== undefined || headers['content-length'] !== undefined;
      if (!announced || ctx.request.length === 0) throw invalidRequest('request body is missing');
    } else {
      const type = ctx.request.is('application/json');
      // null: no body at all (neither Content-Length nor Transfer-Encoding); or an empty one.
      if (type === null || ctx.request.length === 0) throw invalidRequest('request body is missing');
      if (type === false) {
        throw new ApiError(ErrorCode.UnsupportedMediaType, NOT_JSON_MESSAGE);
      }
      const charset = ctx.request.charset.toLowerCase();
      if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') {
        throw new ApiError(ErrorCode.UnsupportedMediaType, `request body must be UTF-8, not ${charset}`);
      }
    }
    // Content codings are case-insensitive (RFC 9110 8.4.1); inflation compares them lowercase.
    const encoding = headers['content-encoding'];
    if (encoding !== undefined) headers['content-encoding'] = encoding.trim().toLowerCase();
    try {
      await readBody(ctx, async () => {});
    } catch (error) {
      throw toBodyReadError(error);
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

/** What raw-body, inflation and zlib (inside koa-bodyparser) throw while reading a body. */
interface BodyReadFailure {
  status?: unknown;
  type?: unknown;
  limit?: unknown;
}

/**
 * The client's failures to send a readable body, as contract errors: over the limit, cut short,
 * a length that lies, an unknown Content-Encoding, or bytes that do not decompress as their
 * encoding says (zlib's errors carry no status). Anything else is returned unchanged.
 */
function toBodyReadError(error: unknown): unknown {
  const failure: BodyReadFailure = typeof error === 'object' && error !== null ? error : {};
  switch (failure.type) {
    case 'entity.too.large':
      return new ApiError(ErrorCode.BodyTooLarge, bodyTooLargeMessage(String(failure.limit)));
    case 'request.aborted':
      return invalidRequest('request body was aborted before it was complete');
    case 'request.size.invalid':
      return invalidRequest('request body length does not match Content-Length');
  }
  // inflation throws a bare Error with status 415 for an unknown Content-Encoding.
  if (failure.status === 415) {
    return new ApiError(ErrorCode.UnsupportedMediaType, CONTENT_ENCODING_MESSAGE);
  }
  if (failure.status !== undefined) return error;
  return invalidRequest('request body could not be decompressed as its Content-Encoding says');
}
