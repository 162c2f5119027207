import type { ParsedUrlQuery } from 'node:querystring';
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
 * The named query parameters, each at most once (a repeated one is a 400: which would we
 * obey?). Parameters not named are ignored, as unknown body fields are.
 */
export function readQueryParameters<const TName extends string>(
  query: ParsedUrlQuery,
  names: readonly TName[],
): Partial<Record<TName, string>> {
  const values: Partial<Record<TName, string>> = {};
  for (const name of names) {
    const value = query[name];
    if (Array.isArray(value)) throw invalidRequest(`query parameter ${name} must be given at most once`);
    if (value !== undefined) values[name] = value;
  }
  return values;
}
