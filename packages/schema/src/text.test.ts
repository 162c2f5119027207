import { describe, expect, it } from 'vitest';
import { isStorableText, STORABLE_TEXT_PATTERN } from './text.js';

/** How JSON Schema 2020-12 validators (and OpenAPI 3.1 tools) compile a `pattern`. */
const pattern = new RegExp(STORABLE_TEXT_PATTERN, 'u');

const SAMPLES: readonly string[] = [
  '',
  'Monstera',
  'Ficus lyrata 🌿',
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

describe('STORABLE_TEXT_PATTERN', () => {
  it.each(SAMPLES.map((text) => [JSON.stringify(text), text]))('agrees with isStorableText on %s', (_, text) => {
    expect(pattern.test(text)).toBe(isStorableText(text));
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
