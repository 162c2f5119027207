import * as v from 'valibot';

/** Length in Unicode code points: what PostgreSQL's varchar(n) counts. */
export function codePointLength(text: string): number {
  let length = 0;
  for (const _ of text) length++;
  return length;
}

/**
 * Text that PostgreSQL can store exactly as given: well-formed UTF-16 (a lone surrogate
 * would be replaced on the way to UTF-8) and no U+0000 (PostgreSQL text cannot hold it).
 */
export function isStorableText(text: string): boolean {
  return text.isWellFormed() && !text.includes('\u0000');
}

/**
 * `isStorableText` as a JSON Schema `pattern`: any number of code units other than U+0000 and
 * surrogates, or a high surrogate followed by a low one (a well-formed pair). It means the same
 * read with the `u` flag (JSON Schema 2020-12's reading: there a pair is one astral code point,
 * matched by the first branch, and only a lone surrogate is a surrogate) and without it (as
 * ajv with `unicodeRegExp: false`, Postman and a plain `new RegExp(pattern)` read it: code unit
 * by code unit, a pair matched by the second branch). A pattern of code points only, such as
 * `^[^\u0000\uD800-\uDFFF]*$`, refused every emoji without the `u` flag. Generated clients and
 * validators then refuse what the service refuses, and only that.
 */
export const STORABLE_TEXT_PATTERN = '^(?:[^\\u0000\\uD800-\\uDFFF]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])*$';

/**
 * A text field named `field` in its messages: a string of `minLength` to `maxLength` code
 * points that PostgreSQL stores exactly. `description` documents it in JSON Schema.
 */
export function textSchema(field: string, minLength: number, maxLength: number, description: string) {
  const message =
    minLength > 0
      ? `${field} must be a string of ${minLength} to ${maxLength} characters`
      : `${field} must be a string of at most ${maxLength} characters`;
  return v.pipe(
    v.string((issue) => (issue.input === undefined ? `${field} is required` : message)),
    v.description(description),
    // For JSON Schema / OpenAPI, whose minLength/maxLength count code points, as the check below does.
    v.metadata(
      minLength > 0
        ? { minLength, maxLength, pattern: STORABLE_TEXT_PATTERN }
        : { maxLength, pattern: STORABLE_TEXT_PATTERN },
    ),
    v.check((text) => {
      const length = codePointLength(text);
      return length >= minLength && length <= maxLength;
    }, message),
    v.check(isStorableText, `${field} must be valid Unicode text without NUL characters (U+0000)`),
  );
}

/**
 * valibot reports a missing key on the object, as `Invalid key: Expected "id" but received
 * undefined`; the contract's messages name the field instead. Other object issues keep
 * valibot's message. Typed as valibot's ErrorMessage, so that the schemas' declared types name
 * valibot only (a type naming this module could not be written by the packages importing them).
 */
export const objectMessage: v.ErrorMessage<v.ObjectIssue> = (issue) => {
  const pathItem = issue.path?.[0];
  return pathItem?.origin === 'key' ? `${String(pathItem.key)} is required` : issue.message;
};
