import { INT64_MAX, INT64_MIN, type NewPlant } from '@plant-store/schema';

/**
 * The plainest NewPlant line, `{"id":N,"name":"...","tag":"..."}` (tag optional), without spaces,
 * escapes or control characters, each text at most 255 UTF-16 code units (so 1 to 255 code points,
 * as NAME_MAX_LENGTH and TAG_MAX_LENGTH allow), the id an int64 in plain decimal: the lines an
 * export writes, and most files.
 */
const PLAIN_LINE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a raw control character is not JSON: such a line goes to the codec.
  /^\{"id":(0|-?[1-9][0-9]{0,18}),"name":"([^"\\\u0000-\u001f]{1,255})"(?:,"tag":"([^"\\\u0000-\u001f]{0,255})")?\}$/;

/**
 * The NewPlant of a plain line (PLAIN_LINE) read without the JSON codec and the schema, or
 * undefined for any other line (which the codec and the schema then judge, with their messages).
 * What it answers is what they answer for the same line: such a line breaks no rule (its texts hold
 * no NUL and no lone surrogate, whatever the decoder let through: a fatal UTF-8 decoder never makes
 * one, and there are no escapes) and names no other key. An import reads a line in about a tenth
 * of the time this way.
 */
export function plainNewPlant(text: string): NewPlant | undefined {
  const match = PLAIN_LINE.exec(text);
  if (match === null) return undefined;
  const [, digits = '', name = '', tag] = match;
  const id = BigInt(digits);
  if (id > INT64_MAX || id < INT64_MIN) return undefined;
  return tag === undefined ? { id, name } : { id, name, tag };
}
