import type { Readable } from 'node:stream';
import { JsonTooDeepError, MAX_JSON_DEPTH, parseJson } from '@plant-store/schema';
import type * as v from 'valibot';
import { invalidRequest } from './api-error.js';
import { checkInput } from './validate.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/** One line of an NDJSON body, validated, with its 1-based line number. */
export interface NumberedLine<TOutput> {
  readonly line: number;
  readonly value: TOutput;
}

export interface NdjsonLinesOptions {
  /** The most bytes one line may have (its newline not counted): one more is a 400 naming it. */
  readonly maxLineBytes: number;
  /** Turns an object as parsed into what the schema judges (int64 strings into bigints, when asked). */
  readonly prepare?: ((value: unknown) => unknown) | undefined;
  /**
   * A quicker reading of the commonest lines: their value, or undefined to judge the line with the
   * codec and the schema. It must answer only what they would (see plainNewPlant).
   */
  readonly plain?: ((text: string) => unknown) | undefined;
}

/** The 400 message for a line: `line N: <why>`. */
export function lineMessage(line: number, why: string): string {
  return `line ${line}: ${why}`;
}

export function lineTooLongMessage(line: number, maxLineBytes: number): string {
  return lineMessage(line, `longer than the limit of ${maxLineBytes} bytes`);
}

/**
 * The lines of an NDJSON body as they arrive, each a JSON object valid against `schema` (numbers
 * exact: int64s as bigints). A line may end in `\n` or `\r\n`, the last one without; blank lines are
 * skipped (but counted in the line numbers). Throws a 400 naming the first line that is too long,
 * not UTF-8, not JSON, not an object or breaks one of the schema's rules (its message, as the JSON
 * route answers it). Holds one line at a time (at most `maxLineBytes`), never the body.
 */
export async function* ndjsonLines<const TSchema extends v.GenericSchema>(
  body: Readable,
  schema: TSchema,
  options: NdjsonLinesOptions,
): AsyncGenerator<NumberedLine<v.InferOutput<TSchema>>> {
  const { maxLineBytes, prepare, plain } = options;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let line = 0;
  const judge = (bytes: Buffer): NumberedLine<v.InferOutput<TSchema>> | undefined => {
    line += 1;
    const end = bytes.length > 0 && bytes[bytes.length - 1] === CARRIAGE_RETURN ? bytes.length - 1 : bytes.length;
    if (end > maxLineBytes) throw invalidRequest(lineTooLongMessage(line, maxLineBytes));
    const content = bytes.subarray(0, end);
    let text: string;
    try {
      text = utf8.decode(content);
    } catch {
      throw invalidRequest(lineMessage(line, 'not valid UTF-8'));
    }
    if (text.trim() === '') return undefined;
    const plainValue = plain?.(text);
    if (plainValue !== undefined) return { line, value: plainValue as v.InferOutput<TSchema> };
    let parsed: unknown;
    try {
      parsed = parseJson(text);
    } catch (error) {
      if (error instanceof JsonTooDeepError) {
        throw invalidRequest(
          lineMessage(line, `nested too deep: at most ${MAX_JSON_DEPTH} levels of arrays and objects`),
        );
      }
      throw invalidRequest(
        lineMessage(line, `not valid JSON: ${error instanceof Error ? error.message : 'parse error'}`),
      );
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw invalidRequest(lineMessage(line, 'must be a JSON object'));
    }
    const checked = checkInput(schema, prepare === undefined ? parsed : prepare(parsed));
    if ('issue' in checked) throw invalidRequest(lineMessage(line, checked.issue));
    return { line, value: checked.output };
  };

  for await (const chunk of body as AsyncIterable<Buffer>) {
    let start = 0;
    for (let newline = chunk.indexOf(NEWLINE); newline !== -1; newline = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, newline);
      const bytes = pendingBytes === 0 ? piece : Buffer.concat([...pending, piece]);
      pending = [];
      pendingBytes = 0;
      start = newline + 1;
      const judged = judge(bytes);
      if (judged !== undefined) yield judged;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      pendingBytes += rest.length;
      // One byte of slack for a `\r` before the newline still to come.
      if (pendingBytes > maxLineBytes + 1) throw invalidRequest(lineTooLongMessage(line + 1, maxLineBytes));
      pending.push(rest);
    }
  }
  if (pendingBytes > 0) {
    const judged = judge(Buffer.concat(pending));
    if (judged !== undefined) yield judged;
  }
}
