import { ErrorCode, parseJson } from '@plant-store/schema';
import type { Middleware } from 'koa';
import bodyParser from 'koa-bodyparser';
import { ApiError, invalidRequest } from '../http/api-error.js';
import type { AppState } from '../http/app-state.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

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
    const type = ctx.request.is('application/json');
    // null: no body at all (neither Content-Length nor Transfer-Encoding); or an empty one.
    if (type === null || ctx.request.length === 0) throw invalidRequest('request body is missing');
    if (type === false) {
      throw new ApiError(
        ErrorCode.UnsupportedMediaType,
        'request body must be JSON sent as Content-Type: application/json',
      );
    }
    const charset = ctx.request.charset.toLowerCase();
    if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') {
      throw new ApiError(ErrorCode.UnsupportedMediaType, `request body must be UTF-8, not ${charset}`);
    }
    try {
      await readBody(ctx, async () => {});
    } catch (error) {
      // raw-body and inflation errors carry an HTTP status (limit, encoding, aborted); zlib's
      // errors for a corrupt gzip/deflate/br body do not, and are the client's fault too.
      if (error instanceof Error && 'status' in error) throw error;
      throw invalidRequest('request body could not be decompressed as its Content-Encoding says');
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
      throw invalidRequest(`request body is not valid JSON: ${error instanceof Error ? error.message : 'parse error'}`);
    }
    if (!isJsonObject(body)) throw invalidRequest('request body must be a JSON object');
    ctx.state.jsonBody = body;
    await next();
  };
}
