import { describe, expect, it } from 'vitest';
import { isStorableText, STORABLE_TEXT_PATTERN } from './text.js';

/**
 * How validators compile a `pattern`: with the `u` flag as JSON Schema 2020-12 says (ajv by
 * default, OpenAPI 3.1 tools), and without it, code unit by code unit (a plain `new RegExp`,
 * ajv with `unicodeRegExp: false`, Postman).
 */
const PATTERNS = [
  ['with the u flag', new RegExp(STORABLE_TEXT_PATTERN, 'u')],
  ['without it', new RegExp(STORABLE_TEXT_PATTERN)],
] as const;

/** The first pattern, of code points only: without the `u` flag it refused every emoji. */
const CODE_POINTS_ONLY = '^[^\\u0000\\uD800-\\uDFFF]*$';

const SAMPLES: readonly string[] = [
  '',
  'Monstera',
  'Ficus lyrata 🌿',
  'Ficus 🌿',
  '🌿',
  '🌿🌱',
  '\uD83C\uDF31 and \uD83C',
  '\u{1F331}\u{10FFFF}',
  'tab\there',
  '\uFFFF\uFFFE',
  'nul\u0000inside',
  '\u0000',
  'lone high \uD83C',
  'lone low \uDF31 here',
  '\uDF31\uD83C',
  '\uD83C\uDF31\uD83C',
];

/** Strings of random UTF-16 code units, weighted towards NUL and surrogates. */
function randomText(random: () => number): string {
  const units: number[] = [];
  const length = Math.floor(random() * 8);
  for (let i = 0; i < length; i++) {
    const pick = random();
    if (pick < 0.1) units.push(0);
    else if (pick < 0.4) units.push(0xd800 + Math.floor(random() * 0x800));
    else units.push(1 + Math.floor(random() * 0xffff));
  }
  return String.fromCharCode(...units);
}

describe.each(PATTERNS)('STORABLE_TEXT_PATTERN %s', (_mode, pattern) => {
  it.each(SAMPLES.map((text) => [JSON.stringify(text), text]))('agrees with isStorableText on %s', (_, text) => {
    expect(pattern.test(text)).toBe(isStorableText(text));
  });

  it('takes emoji and every astral character, which a pattern of code points refused without the u flag', () => {
    for (const text of ['Ficus 🌿', '🌿', '\u{10000}', '\u{10FFFF}', 'a\u{1F331}b\u{1F33F}c']) {
      expect(pattern.test(text), JSON.stringify(text)).toBe(true);
    }
    expect(new RegExp(CODE_POINTS_ONLY).test('Ficus 🌿')).toBe(false);
  });

  it('agrees with isStorableText on 20,000 random strings of code units', () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    let refused = 0;
    for (let i = 0; i < 20_000; i++) {
      const text = randomText(random);
      expect(pattern.test(text), JSON.stringify(text)).toBe(isStorableText(text));
      if (!isStorableText(text)) refused++;
    }
    // Both kinds were drawn: the comparison covered accepted and refused strings.
    expect(refused).toBeGreaterThan(1_000);
    expect(refused).toBeLessThan(19_000);
  });
});
