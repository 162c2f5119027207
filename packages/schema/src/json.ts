import { isInteger, LosslessNumber, parse, stringify } from 'lossless-json';

/**
 * The exact JSON codec of the wire contract. `JSON.parse` turns 9007199254740993 into
 * 9007199254740992; this codec keeps every integer exact as a `bigint` and writes bigints
 * back as plain JSON integers.
 *
 * Parsing: every number with an integer value becomes a `bigint` (also `1e3` and `7.0`);
 * a number with a fractional part stays exact as a lossless-json `LosslessNumber`.
 * Duplicate keys with different values are refused (no parser disagreements about which wins).
 */
export function parseJson(text: string): unknown {
  return parse(text, null, parseJsonNumber);
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
