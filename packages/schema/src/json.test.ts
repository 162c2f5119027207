import { LosslessNumber } from 'lossless-json';
import { afterEach, describe, expect, it } from 'vitest';
import { JsonTooDeepError, MAX_JSON_DEPTH, parseJson, stringifyJson } from './json.js';

describe('parseJson: integers', () => {
  it('keeps 9007199254740993 exact as a bigint, where JSON.parse rounds it', () => {
    const text = '{"id":9007199254740993}';
    expect(parseJson(text)).toStrictEqual({ id: 9007199254740993n });
    expect(JSON.parse(text)).toStrictEqual({ id: 9007199254740992 });
  });

  it.each(['{"id":-9223372036854775808}', '{"id":9223372036854775807}'])('round-trips %s exactly as text', (text) => {
    expect(stringifyJson(parseJson(text))).toBe(text);
  });

  it('turns every integer into a bigint, small ones too', () => {
    expect(parseJson('[0,1,-1,42]')).toStrictEqual([0n, 1n, -1n, 42n]);
  });

  it.each([
    ['1e3', 1000n],
    ['1E3', 1000n],
    ['1e+3', 1000n],
    ['7.0', 7n],
    ['7.000', 7n],
    ['-0', 0n],
    ['-0.0', 0n],
    ['0.00', 0n],
    ['0e-7', 0n],
    ['0e999', 0n],
    ['1.50e1', 15n],
    ['-1.5e1', -15n],
    ['10e-1', 1n],
    ['1200e-2', 12n],
    ['0.5e1', 5n],
    ['9007199254740993.0', 9007199254740993n],
    ['9.223372036854775807e18', 9223372036854775807n],
    ['-9.223372036854775808e18', -9223372036854775808n],
    ['1e18', 1000000000000000000n],
  ])('reads %s, which has an integer value, as the bigint %d', (text, expected) => {
    const value = parseJson(text);
    expect(typeof value).toBe('bigint');
    expect(value).toBe(expected);
  });
});

describe('parseJson: numbers that are not int64-sized integers', () => {
  it.each([
    ['1.5', '1.5'],
    ['a fraction in exponent form', '1.25e1'],
    ['1e-7', '1e-7'],
    ['0.05e1', '0.05e1'],
    ['1e999', '1e999'],
    ['a 1000-digit integer in exponent form', `1.${'2'.repeat(999)}e999`],
    ['a 1000-digit integer with e0', `${'9'.repeat(1000)}e0`],
  ])('keeps %s as a LosslessNumber with its exact text', (_label, text) => {
    const value = parseJson(text);
    // Neither a rounded number nor a bigint: the schema refuses it as an id, and nothing is lost.
    expect(typeof value).not.toBe('number');
    expect(typeof value).not.toBe('bigint');
    expect(value).toBeInstanceOf(LosslessNumber);
    expect(value).toStrictEqual(new LosslessNumber(text));
  });

  it('writes a LosslessNumber back as its original text', () => {
    expect(stringifyJson(parseJson('{"price":1.50,"tiny":1e-7}'))).toBe('{"price":1.50,"tiny":1e-7}');
  });
});

describe('parseJson: structure', () => {
  it('leaves strings alone, digits or not', () => {
    expect(parseJson('{"id":"9007199254740993","ok":true,"none":null}')).toStrictEqual({
      id: '9007199254740993',
      ok: true,
      none: null,
    });
  });

  it.each([
    ['at the top level', '{"id":1,"id":2}'],
    ['in a nested object', '{"plant":{"name":"a","name":"b"}}'],
    ['with values of different types', '{"tag":"x","tag":null}'],
  ])('refuses duplicate keys with different values %s', (_label, text) => {
    expect(() => parseJson(text)).toThrow(SyntaxError);
    expect(() => parseJson(text)).toThrow(/Duplicate key/);
  });

  it('accepts a duplicate key that repeats the same value', () => {
    expect(parseJson('{"id":1,"id":1}')).toStrictEqual({ id: 1n });
  });

  it('does not mistake inherited names such as "constructor" for duplicate keys', () => {
    expect(parseJson('{"constructor":1,"toString":"x"}')).toStrictEqual({
      constructor: 1n,
      toString: 'x',
    });
  });

  it.each([
    '',
    '{',
    '{"id":}',
    "{'id':1}",
    '{"id":1,}',
    '[1,]',
    'NaN',
    'Infinity',
    '01',
    '1.',
    '.5',
    '+1',
    '{"id":1} trailing',
    'undefined',
  ])('throws a SyntaxError on the malformed JSON %j', (text) => {
    expect(() => parseJson(text)).toThrow(SyntaxError);
  });
});

describe('parseJson: nesting depth', () => {
  const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

  it(`reads ${MAX_JSON_DEPTH} levels of arrays and objects`, () => {
    expect(() => parseJson(nested(MAX_JSON_DEPTH))).not.toThrow();
    const objects = `${'{"a":'.repeat(MAX_JSON_DEPTH - 1)}{}${'}'.repeat(MAX_JSON_DEPTH - 1)}`;
    expect(() => parseJson(objects)).not.toThrow();
  });

  it.each([
    ['one level too many', MAX_JSON_DEPTH + 1],
    ['far more than the call stack holds', 200_000],
  ])('refuses %s with a JsonTooDeepError naming the limit, never a stack overflow', (_label, levels) => {
    const attempt = () => parseJson(nested(levels));
    expect(attempt).toThrow(JsonTooDeepError);
    expect(attempt).toThrow(SyntaxError);
    expect(attempt).toThrow(`JSON is nested too deep: more than ${MAX_JSON_DEPTH} levels of arrays and objects`);
  });

  it('refuses an unclosed deep text for its depth too', () => {
    expect(() => parseJson('{"a":'.repeat(100_000))).toThrow(JsonTooDeepError);
  });

  it('does not count brackets inside strings, escaped quotes and backslashes included', () => {
    const name = `${'['.repeat(200)}\\"${'{'.repeat(200)}`;
    expect(parseJson(JSON.stringify({ name }))).toStrictEqual({ name });
  });
});

describe('parseJson: __proto__', () => {
  afterEach(() => {
    // Clean up should a regression pollute the prototype, so other tests are not affected.
    delete (Object.prototype as Record<string, unknown>).polluted;
  });

  it('keeps a "__proto__" key as an own property without polluting Object.prototype', () => {
    const value = parseJson('{"__proto__":{"polluted":true},"name":"Fern"}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    expect(value).toBeTypeOf('object');
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value as object)).toEqual(['__proto__', 'name']);
    expect((value as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('does the same in nested objects and arrays', () => {
    const value = parseJson('{"a":{"__proto__":{"polluted":1}},"b":[{"__proto__":{"polluted":2}}]}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    expect(value).toStrictEqual({
      a: Object.fromEntries([['__proto__', { polluted: 1n }]]),
      b: [Object.fromEntries([['__proto__', { polluted: 2n }]])],
    });
  });
});

describe('stringifyJson', () => {
  it('writes bigints inside objects and arrays as exact JSON integers', () => {
    expect(
      stringifyJson({
        id: 9007199254740993n,
        name: 'Fern',
        ids: [-9223372036854775808n, 9223372036854775807n],
        nested: { deeper: [{ id: 1n }] },
      }),
    ).toBe(
      '{"id":9007199254740993,"name":"Fern","ids":[-9223372036854775808,9223372036854775807],' +
        '"nested":{"deeper":[{"id":1}]}}',
    );
  });

  it('writes a bigint on its own', () => {
    expect(stringifyJson(9223372036854775807n)).toBe('9223372036854775807');
  });

  it('writes everything else as JSON.stringify does', () => {
    const value = { name: 'Fern', tag: undefined, n: 1.5, ok: false, none: null, list: [1, 'a'] };
    expect(stringifyJson(value)).toBe(JSON.stringify(value));
  });

  it('round-trips a stored plant exactly', () => {
    const text = '{"id":9007199254740993,"name":"Fern","tag":"indoor"}';
    expect(stringifyJson(parseJson(text))).toBe(text);
  });

  it.each([
    ['undefined', undefined],
    ['a function', () => 1],
    ['a symbol', Symbol('plant')],
  ])('throws a TypeError for %s, which has no JSON representation', (_label, value) => {
    expect(() => stringifyJson(value)).toThrow(TypeError);
    expect(() => stringifyJson(value)).toThrow('value has no JSON representation');
  });
});

describe('parseJson digit cap', () => {
  it('keeps an integer of more than 400 digits as its exact text instead of converting it', () => {
    const digits = '9'.repeat(100_000);
    const value = (parseJson(`{"id": ${digits}}`) as { id: unknown }).id;
    expect(value).toBeInstanceOf(LosslessNumber);
    expect(String(value)).toBe(digits);
  });

  it('still converts a 400-digit integer to a bigint', () => {
    expect(parseJson('9'.repeat(400))).toBe(10n ** 400n - 1n);
  });
});
