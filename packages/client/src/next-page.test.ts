import type { ListPlantsQuery } from '@plant-store/schema';
import { describe, expect, it } from 'vitest';
import { readNextPage } from './next-page.js';
import { PlantStoreError } from './plant-store-error.js';

const firstPage = new URL('http://127.0.0.1:3000/plants?limit=2');
const firstQuery: ListPlantsQuery = { limit: 2 };

function refusal(run: () => unknown): PlantStoreError {
  try {
    run();
  } catch (error) {
    if (error instanceof PlantStoreError) return error;
    throw error;
  }
  throw new Error('expected a PlantStoreError');
}

describe('readNextPage', () => {
  it('is null without a Link header, or without rel="next"', () => {
    expect(readNextPage(null, firstPage, firstQuery)).toBeNull();
    expect(readNextPage('', firstPage, firstQuery)).toBeNull();
    expect(readNextPage('</plants?limit=2>; rel="first"', firstPage, firstQuery)).toBeNull();
  });

  it('reads the query of a path-absolute reference, keeping the id exact', () => {
    expect(readNextPage('</plants?limit=2&after=9007199254740993>; rel="next"', firstPage, firstQuery)).toEqual({
      limit: 2,
      after: 9007199254740993n,
    });
  });

  it.each([
    ['a path-relative reference', '<plants?limit=2&after=-9223372036854775808>; rel="next"'],
    ['a query-only reference', '<?limit=2&after=-9223372036854775808>; rel="next"'],
    [
      'an absolute URI on the same origin',
      '<http://127.0.0.1:3000/plants?limit=2&after=-9223372036854775808>; rel=next',
    ],
    ['rel among other relation types', '</plants?limit=2&after=-9223372036854775808>; rel="next last"'],
    ['another link first', '</plants?limit=2>; rel="first", </plants?limit=2&after=-9223372036854775808>; rel="next"'],
  ])('resolves %s against the request URL', (_label, header) => {
    expect(readNextPage(header, firstPage, firstQuery)).toEqual({ limit: 2, after: -9223372036854775808n });
  });

  it('resolves against a request URL below a path prefix', () => {
    const request = new URL('https://example.com/store/plants?limit=2');
    expect(readNextPage('</store/plants?limit=2&after=5>; rel="next"', request, firstQuery)).toEqual({
      limit: 2,
      after: 5n,
    });
    expect(readNextPage('<plants?limit=2&after=5>; rel="next"', request, firstQuery)).toEqual({ limit: 2, after: 5n });
  });

  describe('the query-only reference the service sends', () => {
    it('resolves to the request path with the query replaced', () => {
      const request = new URL('http://127.0.0.1:3000/plants?limit=20&after=100');
      expect(readNextPage('<?limit=20&after=123>; rel="next"', request, { limit: 20, after: 100n })).toEqual({
        limit: 20,
        after: 123n,
      });
    });

    it('decodes a form-encoded tag and a negative after', () => {
      const tag = 'with space & ü/?';
      const request = new URL('http://127.0.0.1:3000/plants?limit=4&tag=with+space+%26+%C3%BC%2F%3F');
      const header = '<?limit=4&tag=with+space+%26+%C3%BC%2F%3F&after=-5>; rel="next"';
      expect(readNextPage(header, request, { limit: 4, tag })).toEqual({ limit: 4, tag, after: -5n });
    });

    it.each([
      'https://example.com/store/plants?limit=2',
      'https://example.com/a/b/plants?limit=2',
      'http://[::1]:8080/plants?limit=2',
    ])('passes the same-origin-and-path check below any prefix (%s)', (requestUrl) => {
      expect(readNextPage('<?limit=2&after=5>; rel="next"', new URL(requestUrl), firstQuery)).toEqual({
        limit: 2,
        after: 5n,
      });
    });

    it.each([
      ['no after', '<?limit=2>; rel="next"', firstQuery, /has no after/],
      ['an empty query', '<?>; rel="next"', firstQuery, /has no after/],
      ['a repeated after', '<?after=5&after=6>; rel="next"', firstQuery, /repeats after/],
      ['a dropped tag', '<?limit=2&after=5>; rel="next"', { limit: 2, tag: 'x' }, /another tag/],
      ['an after that does not move', '<?limit=2&after=10>; rel="next"', { limit: 2, after: 10n }, /does not move/],
    ])('refuses %s', (_label, header, requested, message) => {
      const error = refusal(() => readNextPage(header, firstPage, requested));
      expect(error).toMatchObject({ kind: 'invalid-response', status: 200, error: 0 });
      expect(error.message).toMatch(message);
    });
  });

  it('decodes a form-encoded tag (+ for space, percent-encoded UTF-8)', () => {
    const tag = 'with space & ü/?';
    const header = '</plants?limit=2&tag=with+space+%26+%C3%BC%2F%3F&after=7>; rel="next"';
    expect(readNextPage(header, firstPage, { limit: 2, tag })).toEqual({ limit: 2, tag, after: 7n });
  });

  it.each([
    ['malformed', 'plants?after=5; rel="next"', /not RFC 8288/],
    ['two next links', '</plants?after=5>; rel="next", </plants?after=6>; rel="next"', /more than one/],
    ['another origin', '<http://elsewhere.example/plants?after=5>; rel="next"', /elsewhere\.example/],
    [
      'another scheme',
      '<https://127.0.0.1:3000/plants?after=5>; rel="next"',
      /is not http:\/\/127\.0\.0\.1:3000\/plants/,
    ],
    ['another path', '</admin?after=5>; rel="next"', /\/admin is not/],
    ['no after', '</plants?limit=2>; rel="next"', /has no after/],
    ['a repeated after', '</plants?after=5&after=6>; rel="next"', /repeats after/],
    ['an after that is not an integer', '</plants?after=5.5>; rel="next"', /after must be an integer/],
    ['an after beyond int64', '</plants?after=9223372036854775808>; rel="next"', /after must be an integer/],
    ['a limit beyond 100', '</plants?limit=101&after=5>; rel="next"', /limit must be an integer/],
    ['a tag that was not asked for', '</plants?tag=x&after=5>; rel="next"', /another tag/],
  ])('refuses a Link with %s as an invalid response', (_label, header, message) => {
    const error = refusal(() => readNextPage(header, firstPage, firstQuery));
    expect(error).toMatchObject({ kind: 'invalid-response', status: 200, error: 0 });
    expect(error.message).toMatch(message);
  });

  it('refuses a next page that drops the tag', () => {
    const error = refusal(() => readNextPage('</plants?after=5>; rel="next"', firstPage, { limit: 2, tag: 'x' }));
    expect(error.message).toMatch(/another tag/);
  });

  it('refuses a next page that does not move past the requested after: the walk would never end', () => {
    const request = { limit: 2, after: 10n };
    expect(refusal(() => readNextPage('</plants?after=10>; rel="next"', firstPage, request)).message).toMatch(
      /does not move past after=10/,
    );
    expect(refusal(() => readNextPage('</plants?after=9>; rel="next"', firstPage, request)).kind).toBe(
      'invalid-response',
    );
    expect(readNextPage('</plants?after=11>; rel="next"', firstPage, request)).toEqual({ limit: 20, after: 11n });
  });
});
