import { invalidRequest } from './api-error.js';

/** Decimal integers as query and path parameters write them; no sign but minus, no spaces. */
const DECIMAL_INTEGER = /^-?[0-9]{1,20}$/;

/**
 * A path or query integer, read out of its text so that the contract schema can judge it:
 * a decimal integer becomes a bigint (exact, any length up to 20 digits); anything else is
 * returned as the text itself, which the schema refuses with its own message.
 */
export function readInteger(text: string): bigint | string {
  return DECIMAL_INTEGER.test(text) ? BigInt(text) : text;
}

/** A small integer parameter (such as `limit`), as a number, or the text for the schema to refuse. */
export function readSmallInteger(text: string): number | string {
  return DECIMAL_INTEGER.test(text) ? Number(text) : text;
}

/**
 * The named query parameters of a raw query string, each at most once (a repeated one is a
 * 400: which would we obey?). Parameters not named are ignored, as unknown body fields are.
 * Decoding is strict: `+` is a space, and a percent-encoding that is not UTF-8 is a 400 rather
 * than silently replaced with U+FFFD (as Node's querystring and URLSearchParams do).
 */
export function readQueryParameters<const TName extends string>(
  querystring: string,
  names: readonly TName[] | ReadonlySet<TName>,
): Partial<Record<TName, string>> {
  const wanted: ReadonlySet<string> = names instanceof Set ? names : new Set(names);
  const values: Partial<Record<string, string>> = {};
  for (const pair of querystring.split('&')) {
    if (pair === '') continue;
    const separator = pair.indexOf('=');
    const name = decodeQueryText(separator === -1 ? pair : pair.slice(0, separator));
    if (name === null || !wanted.has(name)) continue;
    const value = decodeQueryText(separator === -1 ? '' : pair.slice(separator + 1));
    if (value === null) throw invalidRequest(`query parameter ${name} is not valid percent-encoded UTF-8`);
    if (values[name] !== undefined) throw invalidRequest(`query parameter ${name} must be given at most once`);
    values[name] = value;
  }
  return values as Partial<Record<TName, string>>;
}

function decodeQueryText(text: string): string | null {
  // Most names and values are plain (`limit`, `20`): nothing to decode, no copy made.
  if (!text.includes('%') && !text.includes('+')) return text;
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return null;
  }
}
