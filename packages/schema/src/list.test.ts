import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { INT64_MAX, INT64_MIN } from './int64.js';
import { ListPlantsQuerySchema, PLANTS_PAGE_DEFAULT_LIMIT, PlantListSchema } from './list.js';
import { PlantIdSchema } from './plant.js';

function firstMessage(input: unknown): string | undefined {
  const result = v.safeParse(ListPlantsQuerySchema, input, { abortEarly: true });
  return result.success ? undefined : result.issues[0].message;
}

describe('ListPlantsQuerySchema', () => {
  it('defaults limit to 20 and leaves tag and after absent', () => {
    expect(v.parse(ListPlantsQuerySchema, {})).toStrictEqual({ limit: PLANTS_PAGE_DEFAULT_LIMIT });
  });

  it('keeps a limit of 1 to 100, any tag up to 255 characters, and an exact int64 after', () => {
    expect(v.parse(ListPlantsQuerySchema, { limit: 100, tag: '', after: INT64_MIN })).toStrictEqual({
      limit: 100,
      tag: '',
      after: INT64_MIN,
    });
    expect(v.parse(ListPlantsQuerySchema, { limit: 1, after: 5 })).toStrictEqual({ limit: 1, after: 5n });
  });

  it.each([
    [{ limit: 0 }, 'limit must be an integer between 1 and 100'],
    [{ limit: 101 }, 'limit must be an integer between 1 and 100'],
    [{ limit: 2.5 }, 'limit must be an integer between 1 and 100'],
    [{ limit: '20' }, 'limit must be an integer between 1 and 100'],
    [{ after: INT64_MAX + 1n }, 'after must be an integer between -9223372036854775808 and 9223372036854775807'],
    [{ after: '5' }, 'after must be an integer between -9223372036854775808 and 9223372036854775807'],
    [{ tag: 'x'.repeat(256) }, 'tag must be a string of at most 255 characters'],
    [{ tag: 'a\u0000' }, 'tag must be valid Unicode text without NUL characters (U+0000)'],
    [{ tag: null }, 'tag must be a string of at most 255 characters'],
  ])('refuses %o with "%s"', (input, message) => {
    expect(firstMessage(input)).toBe(message);
  });
});

describe('PlantListSchema and PlantIdSchema', () => {
  it('parses a page of plants with exact ids', () => {
    expect(
      v.parse(PlantListSchema, [
        { id: INT64_MAX, name: 'Fern' },
        { id: 1n, name: 'Aloe', tag: 'succulent' },
      ]),
    ).toEqual([
      { id: INT64_MAX, name: 'Fern' },
      { id: 1n, name: 'Aloe', tag: 'succulent' },
    ]);
    expect(v.safeParse(PlantListSchema, [{ name: 'Fern' }]).success).toBe(false);
  });

  it('takes an int64 path id and refuses anything else with the id message', () => {
    expect(v.parse(PlantIdSchema, -(2n ** 63n))).toBe(INT64_MIN);
    const refused = v.safeParse(PlantIdSchema, 'abc');
    expect(refused.success ? undefined : refused.issues[0].message).toBe(
      'id must be an integer between -9223372036854775808 and 9223372036854775807',
    );
  });
});
