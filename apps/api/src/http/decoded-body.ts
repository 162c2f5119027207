import type { IncomingMessage } from 'node:http';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { createBrotliDecompress, createUnzip } from 'node:zlib';
import { ErrorCode } from '@plant-store/schema';
import { ApiError, invalidRequest } from './api-error.js';

/** The 415 for a Content-Encoding this service does not decode. */
export const CONTENT_ENCODING_MESSAGE =
  'request body Content-Encoding is not supported; send identity, gzip, deflate or br (one of them, not a list)';

/** The 400 for bytes that do not decode as their Content-Encoding says: corrupt, or cut short. */
export const UNDECODABLE_MESSAGE = 'request body could not be decompressed as its Content-Encoding says';

/** The 400 for a request whose connection ended before its body did. */
export const ABORTED_MESSAGE = 'request body was aborted before it was complete';

/** The 413 for a body over the limit. */
export function bodyTooLargeMessage(limitBytes: number | string): string {
  return `request body is larger than the limit of ${limitBytes} bytes`;
}

export interface DecodedBodyOptions {
  /** Most bytes the decoded body may have: one byte more fails it with 413. Absent: no limit. */
  readonly maxBytes?: number | undefined;
}

type ContentCoding = 'identity' | 'gzip' | 'deflate' | 'br';

/**
 * The request's Content-Encoding as one of the codings read here; throws the 415 for any other
 * (a list included). Codings are case-insensitive (RFC 9110 8.4.1); an empty header is identity.
 */
export function contentCodingOf(req: Pick<IncomingMessage, 'headers'>): ContentCoding {
  const coding = req.headers['content-encoding']?.trim().toLowerCase();
  if (coding === undefined || coding === '' || coding === 'identity') return 'identity';
  if (coding === 'gzip' || coding === 'deflate' || coding === 'br') return coding;
  throw new ApiError(ErrorCode.UnsupportedMediaType, CONTENT_ENCODING_MESSAGE);
}

/**
 * The request's body as its Content-Encoding decodes it (identity, gzip, deflate or br), as a
 * stream that fails only with the contract's errors: 400 for bytes that do not decode (corrupt,
 * truncated, a wrong checksum), 400 when the connection ends before the body does, 413 as soon as
 * the decoded bytes pass `maxBytes`. Throws, before reading anything: the 415 for another coding,
 * the 413 for an identity body whose Content-Length is over `maxBytes`, the 400 for a request
 * whose connection is gone already.
 *
 * Whatever happens, nothing here can take the process down: every stream made here keeps an
 * error listener for good, and the decoder is stopped and unhooked from the request as soon as
 * the returned stream ends, fails or is destroyed (by a reader that gave up), so a decoder with
 * input left (a wrong checksum past the limit) never reports to nobody. The request is never
 * destroyed here: that would close the connection before the refusal is answered.
 */
export function decodedBody(req: IncomingMessage, options: DecodedBodyOptions = {}): Readable {
  const { maxBytes } = options;
  const coding = contentCodingOf(req);
  if (req.destroyed) throw invalidRequest(ABORTED_MESSAGE);
  const declared = coding === 'identity' ? Number(req.headers['content-length'] ?? Number.NaN) : Number.NaN;
  // Announced too long: refused without reading a byte of it.
  if (maxBytes !== undefined && declared > maxBytes) throw tooLarge(maxBytes);

  const body = new CountedBody(maxBytes);
  const decoder = coding === 'identity' ? undefined : coding === 'br' ? createBrotliDecompress() : createUnzip();
  const fail = (error: ApiError) => {
    if (!body.destroyed) body.destroy(error);
  };
  // A connection that ends mid-body closes the request before it is complete.
  const cutShort = () => {
    if (cutOff(req)) fail(invalidRequest(ABORTED_MESSAGE));
  };
  body.on('error', ignore);
  body.once('close', () => {
    req.off('close', cutShort);
    req.unpipe(decoder ?? body);
    decoder?.destroy();
  });
  // A request cut short also ends its decoder's input early: that is the connection's fault. A
  // body that had decoded past the limit before its bytes stopped decoding is too large, whether or
  // not its reader had taken that much yet: the answer does not hang on how the chunks arrived.
  decoder?.on('error', () => {
    if (maxBytes !== undefined && body.bytesDecoded(decoder) > maxBytes) fail(tooLarge(maxBytes));
    else fail(invalidRequest(cutOff(req) ? ABORTED_MESSAGE : UNDECODABLE_MESSAGE));
  });
  req.once('close', cutShort);
  if (decoder === undefined) {
    req.pipe(body);
  } else {
    req.pipe(decoder).pipe(body);
  }
  return body;
}

/** Passes the decoded bytes on, counting them; fails with the 413 past the limit. */
class CountedBody extends Transform {
  #bytes = 0;

  constructor(private readonly maxBytes: number | undefined) {
    super();
  }

  /** The bytes `decoder` has put out so far: those counted here, those on their way, those it holds. */
  bytesDecoded(decoder: Readable): number {
    return this.#bytes + this.writableLength + decoder.readableLength;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#bytes += chunk.length;
    if (this.maxBytes !== undefined && this.#bytes > this.maxBytes) {
      callback(tooLarge(this.maxBytes));
      return;
    }
    callback(null, chunk);
  }
}

/** Whether the request's connection ended before its body did. */
function cutOff(req: IncomingMessage): boolean {
  return req.destroyed && !req.complete;
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError(ErrorCode.BodyTooLarge, bodyTooLargeMessage(maxBytes));
}

function ignore(): void {}
