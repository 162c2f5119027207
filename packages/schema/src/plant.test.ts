import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { parseJson } from './json.js';
import { NAME_MAX_LENGTH, NewPlantSchema, PlantSchema, StoredPlantSchema, TAG_MAX_LENGTH } from './plant.js';

// Messages are written out: they are part of the contract other teams show to clients.
const ID_RANGE_MESSAGE = 'id must be an integer between -9223372036854775808 and 9223372036854775807';
const NAME_MESSAGE = 'name must be a string of 1 to 255 characters';
const TAG_MESSAGE = 'tag must be a string of at most 255 characters';
const NAME_TEXT_MESSAGE = 'name must be valid Unicode text without NUL characters (U+0000)';
const TAG_TEXT_MESSAGE = 'tag must be valid Unicode text without NUL characters (U+0000)';

// U+1F331 SEEDLING: one code point, two UTF-16 code units.
const SEEDLING = '\u{1F331}';

interface Refusal {
  path: string | null;
  message: string;
}

/** What valibot reports for `input`: each issue's dot path and message, or [] when accepted. */
function refusalsFor(input: unknown, schema: v.GenericSchema = NewPlantSchema): Refusal[] {
  const result = v.safeParse(schema, input);
  if (result.success) return [];
  return result.issues.map((issue) => ({ path: v.getDotPath(issue), message: issue.message }));
}

function plantWith(fields: Record<string, unknown>): Record<string, unknown> {
  return { id: 1n, name: 'Fern', ...fields };
}

describe('NewPlantSchema: id', () => {
  it.each([
    ['INT64_MIN', -9223372036854775808n],
    ['INT64_MAX', 9223372036854775807n],
    ['2^53 + 1', 9007199254740993n],
  ])('accepts %s as a bigint and keeps it exact', (_label, id) => {
    expect(v.parse(NewPlantSchema, plantWith({ id })).id).toBe(id);
  });

  it.each([
    ['one below INT64_MIN', -9223372036854775809n],
    ['one above INT64_MAX', 9223372036854775808n],
  ])('refuses %s', (_label, id) => {
    expect(refusalsFor(plantWith({ id }))).toEqual([{ path: 'id', message: ID_RANGE_MESSAGE }]);
  });

  it('accepts a safe-integer number and outputs a bigint', () => {
    const small = v.parse(NewPlantSchema, plantWith({ id: 42 }));
    expect(small.id).toBe(42n);
    const largest = v.parse(NewPlantSchema, plantWith({ id: Number.MAX_SAFE_INTEGER }));
    expect(largest.id).toBe(9007199254740991n);
  });

  it.each([
    ['2^53 + 2', 2 ** 53 + 2],
    ['a fraction', 1.5],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['the string "1"', '1'],
    ['null', null],
    ['true', true],
    ['false', false],
  ])('refuses %s', (_label, id) => {
    expect(refusalsFor(plantWith({ id }))).toEqual([{ path: 'id', message: ID_RANGE_MESSAGE }]);
  });

  it('says id is required when it is missing', () => {
    expect(refusalsFor({ name: 'Fern' })).toEqual([{ path: 'id', message: 'id is required' }]);
  });
});

describe('NewPlantSchema: name', () => {
  it('allows names of 255 characters', () => {
    expect(NAME_MAX_LENGTH).toBe(255);
  });

  it.each([
    ['1 character', 'a'],
    ['255 characters', 'a'.repeat(255)],
  ])('accepts a name of %s', (_label, name) => {
    expect(v.parse(NewPlantSchema, plantWith({ name })).name).toBe(name);
  });

  it.each([
    ['0 characters', ''],
    ['256 characters', 'a'.repeat(256)],
  ])('refuses a name of %s', (_label, name) => {
    expect(refusalsFor(plantWith({ name }))).toEqual([{ path: 'name', message: NAME_MESSAGE }]);
  });

  // Lengths count Unicode code points, not UTF-16 code units (`.length`) or bytes: PostgreSQL's
  // varchar(255) counts characters, so 255 emoji fit the column even though their `.length` is
  // 510. Counting `.length` would refuse names the database stores; counting less would let
  // through names the database refuses, which then fail as a 500 instead of a 400.
  it('counts code points: 255 emoji pass, 256 fail', () => {
    const name255 = SEEDLING.repeat(255);
    expect(name255.length).toBe(510);
    expect(v.parse(NewPlantSchema, plantWith({ name: name255 })).name).toBe(name255);
    expect(refusalsFor(plantWith({ name: SEEDLING.repeat(256) }))).toEqual([{ path: 'name', message: NAME_MESSAGE }]);
  });

  it.each([
    ['a number', 1],
    ['null', null],
    ['a boolean', true],
    ['an object', { text: 'Fern' }],
    ['an array', ['Fern']],
  ])('refuses a name that is %s', (_label, name) => {
    expect(refusalsFor(plantWith({ name }))).toEqual([{ path: 'name', message: NAME_MESSAGE }]);
  });

  it('says name is required when it is missing', () => {
    expect(refusalsFor({ id: 1n })).toEqual([{ path: 'name', message: 'name is required' }]);
  });

  // PostgreSQL text cannot hold U+0000, and a lone surrogate has no UTF-8 form: either would
  // fail in the database (or be silently replaced) instead of being refused here.
  it.each([
    ['a NUL character', 'Fe\u0000rn'],
    ['only a NUL character', '\u0000'],
    ['a lone high surrogate', 'Fern\uD83C'],
    ['a lone low surrogate', '\uDF31Fern'],
    ['a reversed surrogate pair', '\uDF31\uD83C'],
  ])('refuses a name with %s', (_label, name) => {
    expect(refusalsFor(plantWith({ name }))).toEqual([{ path: 'name', message: NAME_TEXT_MESSAGE }]);
  });

  it('accepts a well-formed surrogate pair', () => {
    expect(v.parse(NewPlantSchema, plantWith({ name: '\uD83C\uDF31' })).name).toBe(SEEDLING);
  });
});

describe('NewPlantSchema: tag', () => {
  it('allows tags of 255 characters', () => {
    expect(TAG_MAX_LENGTH).toBe(255);
  });

  it('accepts an absent tag and leaves it absent in the output', () => {
    const plant = v.parse(NewPlantSchema, { id: 1n, name: 'Fern' });
    expect(plant).toStrictEqual({ id: 1n, name: 'Fern' });
    expect('tag' in plant).toBe(false);
  });

  it.each([
    ['an empty tag', ''],
    ['a tag of 255 characters', 't'.repeat(255)],
    ['a tag of 255 emoji', SEEDLING.repeat(255)],
  ])('accepts %s', (_label, tag) => {
    expect(v.parse(NewPlantSchema, plantWith({ tag })).tag).toBe(tag);
  });

  it.each([
    ['a tag of 256 characters', 't'.repeat(256)],
    ['a tag of 256 emoji', SEEDLING.repeat(256)],
    ['a null tag (null is not a string)', null],
    ['a number tag', 7],
    ['a boolean tag', false],
  ])('refuses %s', (_label, tag) => {
    expect(refusalsFor(plantWith({ tag }))).toEqual([{ path: 'tag', message: TAG_MESSAGE }]);
  });

  // exactOptional: a tag may be absent, but a present key holding undefined is not a string.
  it('refuses a tag key that is present with the value undefined', () => {
    const refusals = refusalsFor(plantWith({ tag: undefined }));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]?.path).toBe('tag');
  });

  it.each([
    ['a NUL character', 'a\u0000b'],
    ['a lone surrogate', '\uD83C'],
  ])('refuses a tag with %s', (_label, tag) => {
    expect(refusalsFor(plantWith({ tag }))).toEqual([{ path: 'tag', message: TAG_TEXT_MESSAGE }]);
  });
});

describe('NewPlantSchema: the object', () => {
  it('outputs exactly id, name and tag', () => {
    expect(v.parse(NewPlantSchema, { id: 7, name: 'Fern', tag: 'indoor' })).toStrictEqual({
      id: 7n,
      name: 'Fern',
      tag: 'indoor',
    });
  });

  it('strips unknown keys from the output', () => {
    const plant = v.parse(NewPlantSchema, {
      id: 1n,
      name: 'Fern',
      tag: 'indoor',
      owner: 'someone',
      status: 'sold',
    });
    expect(plant).toStrictEqual({ id: 1n, name: 'Fern', tag: 'indoor' });
    expect(Object.keys(plant)).toEqual(['id', 'name', 'tag']);
  });

  it('reports every failing field at once', () => {
    expect(refusalsFor({ id: 1.5, name: '', tag: null })).toEqual([
      { path: 'id', message: ID_RANGE_MESSAGE },
      { path: 'name', message: NAME_MESSAGE },
      { path: 'tag', message: TAG_MESSAGE },
    ]);
  });

  it.each([
    ['null', null],
    ['a string', 'Fern'],
    ['a number', 1],
    ['an array', []],
  ])('refuses %s as the body', (_label, body) => {
    expect(v.safeParse(NewPlantSchema, body).success).toBe(false);
  });

  it("keeps valibot's message for a body that is not an object", () => {
    expect(refusalsFor(null)).toEqual([{ path: null, message: 'Invalid type: Expected Object but received null' }]);
  });
});

describe('PlantSchema', () => {
  it('accepts { name, tag? } and strips anything else, id included', () => {
    expect(v.parse(PlantSchema, { name: 'Fern' })).toStrictEqual({ name: 'Fern' });
    expect(v.parse(PlantSchema, { id: 1n, name: 'Fern', tag: 'x', extra: true })).toStrictEqual({
      name: 'Fern',
      tag: 'x',
    });
  });

  it('applies the same name and tag rules as NewPlant', () => {
    expect(refusalsFor({ tag: 'x' }, PlantSchema)).toEqual([{ path: 'name', message: 'name is required' }]);
    expect(refusalsFor({ name: 'a'.repeat(256) }, PlantSchema)).toEqual([{ path: 'name', message: NAME_MESSAGE }]);
    expect(refusalsFor({ name: 'Fern', tag: null }, PlantSchema)).toEqual([{ path: 'tag', message: TAG_MESSAGE }]);
  });
});

describe('StoredPlantSchema', () => {
  it('is the NewPlant shape: { id, name, tag? } with an exact int64 id', () => {
    expect(v.parse(StoredPlantSchema, { id: 9223372036854775807n, name: 'Fern' })).toStrictEqual({
      id: 9223372036854775807n,
      name: 'Fern',
    });
    expect(refusalsFor({ id: 2n ** 63n, name: 'Fern' }, StoredPlantSchema)).toEqual([
      { path: 'id', message: ID_RANGE_MESSAGE },
    ]);
  });
});

describe('from JSON text to NewPlant (parseJson, then NewPlantSchema)', () => {
  it('keeps 2^53 + 1 exact', () => {
    const text = '{"id":9007199254740993,"name":"Fern"}';
    expect(v.parse(NewPlantSchema, parseJson(text))).toStrictEqual({
      id: 9007199254740993n,
      name: 'Fern',
    });
    // Plain JSON.parse has already rounded the id to 2^53: the schema refuses it rather than
    // store a plant under an id the client never sent.
    expect(refusalsFor(JSON.parse(text))).toEqual([{ path: 'id', message: ID_RANGE_MESSAGE }]);
  });

  it.each([
    ['-9223372036854775808', -9223372036854775808n],
    ['9223372036854775807', 9223372036854775807n],
    ['1e3', 1000n],
    ['7.0', 7n],
    ['-0', 0n],
  ])('accepts the id %s', (idText, id) => {
    const plant = v.parse(NewPlantSchema, parseJson(`{"id":${idText},"name":"Fern"}`));
    expect(plant.id).toBe(id);
  });

  it.each(['-9223372036854775809', '9223372036854775808', '1.5', '1e-7', '1e999', '"1"', 'null', 'true'])(
    'refuses the id %s',
    (idText) => {
      expect(refusalsFor(parseJson(`{"id":${idText},"name":"Fern"}`))).toEqual([
        { path: 'id', message: ID_RANGE_MESSAGE },
      ]);
    },
  );

  it('refuses a null tag and ignores unknown fields', () => {
    expect(refusalsFor(parseJson('{"id":1,"name":"Fern","tag":null}'))).toEqual([
      { path: 'tag', message: TAG_MESSAGE },
    ]);
    const text = '{"id":1,"name":"Fern","constructor":1,"__proto__":{"tag":"x"},"extra":[]}';
    expect(v.parse(NewPlantSchema, parseJson(text))).toStrictEqual({ id: 1n, name: 'Fern' });
  });
});
