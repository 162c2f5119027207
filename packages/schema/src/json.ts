import { isInteger, LosslessNumber, parse, stringify } from 'lossless-json';

/**
 * How deeply arrays and objects may nest in a JSON text `parseJson` reads: `{"a":[1]}` is 2
 * levels. The contract's bodies need 1 or 2; the parser recurses once per level, so without a
 * limit a body of a few thousand `[` would overflow the call stack. 64 leaves room for any
 * unknown fields a client sends along, and is checked before parsing starts.
 */
export const MAX_JSON_DEPTH = 64;

/** The SyntaxError `parseJson` throws for a text nested deeper than `MAX_JSON_DEPTH`. */
export class JsonTooDeepError extends SyntaxError {
  override readonly name = 'JsonTooDeepError';
  readonly maxDepth = MAX_JSON_DEPTH;
  constructor(position: number) {
    super(
      `JSON is nested too deep: more than ${MAX_JSON_DEPTH} levels of arrays and objects (at position ${position})`,
    );
  }
}

/**
 * The exact JSON codec of the wire contract. `JSON.parse` turns 9007199254740993 into
 * 9007199254740992; this codec keeps every integer exact as a `bigint` and writes bigints
 * back as plain JSON integers.
 *
 * Parsing: every number with an integer value becomes a `bigint` (also `1e3` and `7.0`);
 * a number with a fractional part stays exact as a lossless-json `LosslessNumber`.
 * Duplicate keys with different values are refused (no parser disagreements about which wins);
 * a key repeated with the same value is accepted, as every parser reads the same object from it.
 * More than `MAX_JSON_DEPTH` levels of nesting throw a `JsonTooDeepError`.
 */
export function parseJson(text: string): unknown {
  checkJsonDepth(text);
  return parse(text, null, parseJsonNumber);
}

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Throws a `JsonTooDeepError` when brackets and braces outside strings nest deeper than
 * `MAX_JSON_DEPTH`: one loop, no recursion, so it cannot overflow the stack itself. Malformed
 * text is left to the parser to describe.
 */
function checkJsonDepth(text: string): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === BACKSLASH) i++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > MAX_JSON_DEPTH) throw new JsonTooDeepError(i);
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    }
  }
}

/** Writes `value` as JSON; bigints become exact JSON integers. */
export function stringifyJson(value: unknown): string {
  const text = stringify(value);
  if (text === undefined) throw new TypeError('value has no JSON representation');
  return text;
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
/**
 * Beyond this many digits (int64 needs 19) an integer stays a LosslessNumber: converting a
 * megabyte of digits to a bigint would stall the event loop for seconds.
 */
const MAX_INTEGER_DIGITS = 400;

export function parseJsonNumber(text: string): bigint | LosslessNumber {
  // Converting is quadratic in the digits: past the cap, keep the exact text instead.
  if (text.length > MAX_INTEGER_DIGITS + 1) return new LosslessNumber(text);
  if (isInteger(text)) return BigInt(text);
  const match = DECIMAL.exec(text);
  if (match) {
    const [, sign = '', whole = '', fraction = '', exponentText = '0'] = match;
    const exponent = Number(exponentText) - fraction.length;
    const digits = (whole + fraction).replace(/^0+(?=\d)/, '');
    // Zero at any exponent (0.00, 0e-7, 0e999) is the integer 0.
    if (digits === '0') return 0n;
    if (exponent >= 0 && digits.length + exponent <= MAX_INTEGER_DIGITS) {
      return BigInt(sign + digits) * 10n ** BigInt(exponent);
    }
    if (exponent < 0 && -exponent <= digits.length) {
      const cut = digits.length + exponent;
      if (/^0*$/.test(digits.slice(cut))) return BigInt(sign + (digits.slice(0, cut) || '0'));
    }
  }
  return new LosslessNumber(text);
}
