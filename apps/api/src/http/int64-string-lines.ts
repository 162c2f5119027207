import { Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/** A line's leading id, as the database writes every plant line (see the db package's plantJson). */
const LEADING_ID = /^\{"id":(-?\d+)/;

/**
 * Rewrites NDJSON plant lines, each starting `{"id":<integer>`, with the id as a decimal string: an
 * export's lines for a request that sent `Plant-Store-Int64: string`. Only the leading id is touched
 * (the only int64 of a plant line); a name that holds the same text is left as it is.
 */
export function int64StringLines(): Transform {
  const decoder = new StringDecoder('utf8');
  let partial = '';
  const rewrite = (lines: string): string =>
    lines
      .split('\n')
      .map((line) => line.replace(LEADING_ID, '{"id":"$1"'))
      .join('\n');
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      const text = partial + decoder.write(chunk);
      const end = text.lastIndexOf('\n');
      if (end === -1) {
        partial = text;
        callback();
        return;
      }
      partial = text.slice(end + 1);
      callback(null, rewrite(text.slice(0, end + 1)));
    },
    flush(callback: TransformCallback) {
      const rest = partial + decoder.end();
      callback(null, rest === '' ? undefined : rewrite(rest));
    },
  });
}
