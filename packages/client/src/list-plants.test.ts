import { INT64_MAX, INT64_MIN, type StoredPlant } from '@plant-store/schema';
import { afterEach, describe, expect, it } from 'vitest';
import {
  closeScriptedServers,
  errorAnswer,
  json,
  type ScriptedAnswer,
  type ScriptFunction,
  startScriptedServer,
} from './test-support/scripted-server.js';
import { caught, createTestClient } from './test-support/test-client.js';

afterEach(closeScriptedServers);

/** Exact JSON text of plants: ids written as integers, never through a number. */
function plantsText(plants: readonly StoredPlant[]): string {
  const items = plants.map(
    ({ id, name, tag }) =>
      `{"id":${id},"name":${JSON.stringify(name)}${tag === undefined ? '' : `,"tag":${JSON.stringify(tag)}`}}`,
  );
  return `[${items.join(',')}]`;
}

/**
 * How the next-page link is written: query-only (`<?limit=...>`, what the service sends), or
 * path-absolute (`<{pathPrefix}/plants?limit=...>`, what it used to send).
 */
type LinkStyle = 'query-only' | { readonly pathPrefix: string };

/**
 * Serves `plants` (sorted by id) page by page as the service does: limit, exact tag, after, and
 * a `Link: <...>; rel="next"` in `linkStyle` when more follow. Reads only the query: whatever
 * path prefix the client used (a proxy may have stripped it) is answered alike.
 */
function pagingScript(plants: readonly StoredPlant[], linkStyle: LinkStyle = 'query-only'): ScriptFunction {
  return (request) => {
    const url = new URL(request.url, 'http://placeholder');
    const limit = Number(url.searchParams.get('limit') ?? '20');
    const tag = url.searchParams.get('tag');
    const afterText = url.searchParams.get('after');
    const after = afterText === null ? undefined : BigInt(afterText);
    const matching = plants.filter(
      (plant) => (tag === null || plant.tag === tag) && (after === undefined || plant.id > after),
    );
    const page = matching.slice(0, limit);
    const last = page.at(-1);
    const headers: Record<string, string> = {};
    if (matching.length > limit && last) {
      const next = new URLSearchParams({
        limit: String(limit),
        ...(tag === null ? {} : { tag }),
        after: String(last.id),
      });
      const path = linkStyle === 'query-only' ? '' : `${linkStyle.pathPrefix}/plants`;
      headers.Link = `<${path}?${next}>; rel="next"`;
    }
    return json(200, plantsText(page), headers);
  };
}

const TAG = 'with space & ü/?';
const TAG_IN_QUERY = 'with+space+%26+%C3%BC%2F%3F';

const STORE: StoredPlant[] = [
  { id: INT64_MIN, name: 'First', tag: TAG },
  { id: -(2n ** 53n) - 1n, name: 'Untagged' },
  { id: -1n, name: 'Second', tag: TAG },
  { id: 0n, name: 'Other', tag: 'other' },
  { id: 2n ** 53n + 1n, name: 'Third', tag: TAG },
  { id: 2n ** 62n, name: 'Fourth', tag: TAG },
  { id: INT64_MAX, name: 'Fifth', tag: TAG },
];
const TAGGED = STORE.filter((plant) => plant.tag === TAG);

const LINK_STYLES: [string, LinkStyle][] = [
  ['query-only', 'query-only'],
  ['path-absolute', { pathPrefix: '' }],
];

describe('listPlants', () => {
  it('asks for limit 20 when not told', async () => {
    const server = await startScriptedServer([json(200, '[]')]);
    expect(await createTestClient(server.url).listPlants()).toEqual({ plants: [], next: null });
    expect(server.requests.map(({ method, url }) => `${method} ${url}`)).toEqual(['GET /plants?limit=20']);
  });

  it('writes limit, the tag form-encoded and after exactly', async () => {
    const server = await startScriptedServer([json(200, '[]')]);
    await createTestClient(server.url).listPlants({ limit: 3, tag: TAG, after: INT64_MIN });
    expect(server.requests[0]?.url).toBe(`/plants?limit=3&tag=${TAG_IN_QUERY}&after=-9223372036854775808`);
  });

  it('sends an empty tag, which matches plants tagged ""', async () => {
    const server = await startScriptedServer([json(200, '[]')]);
    await createTestClient(server.url).listPlants({ tag: '' });
    expect(server.requests[0]?.url).toBe('/plants?limit=20&tag=');
  });

  it.each([
    ['query-only', '<?limit=3&after=9223372036854775806>; rel="next"'],
    ['path-absolute', '</plants?limit=3&after=9223372036854775806>; rel="next"'],
  ])('reads every id exactly and the next page from a %s Link', async (_label, link) => {
    const server = await startScriptedServer([
      json(
        200,
        '[{"id":-9223372036854775808,"name":"a"},{"id":9007199254740993,"name":"b","tag":"t"},{"id":9223372036854775806,"name":"c"}]',
        { Link: link },
      ),
    ]);
    expect(await createTestClient(server.url).listPlants({ limit: 3 })).toStrictEqual({
      plants: [
        { id: INT64_MIN, name: 'a' },
        { id: 9007199254740993n, name: 'b', tag: 't' },
        { id: INT64_MAX - 1n, name: 'c' },
      ],
      next: { limit: 3, after: INT64_MAX - 1n },
    });
  });

  it('reads a query-only Link with a form-encoded tag', async () => {
    const server = await startScriptedServer([
      json(200, '[{"id":-9,"name":"a","tag":"with space & ü/?"},{"id":-5,"name":"b","tag":"with space & ü/?"}]', {
        Link: `<?limit=2&tag=${TAG_IN_QUERY}&after=-5>; rel="next"`,
      }),
    ]);
    const page = await createTestClient(`${server.url}/store/`).listPlants({ limit: 2, tag: TAG });
    expect(page.next).toEqual({ limit: 2, tag: TAG, after: -5n });
    expect(server.requests[0]?.url).toBe(`/store/plants?limit=2&tag=${TAG_IN_QUERY}`);
  });

  it.each(LINK_STYLES)('fetches the next page when given the next query (%s Link)', async (_label, linkStyle) => {
    const server = await startScriptedServer(pagingScript(STORE, linkStyle));
    const client = createTestClient(server.url);
    const first = await client.listPlants({ limit: 4, tag: TAG });
    expect(first.plants).toEqual(TAGGED.slice(0, 4));
    expect(first.next).toEqual({ limit: 4, tag: TAG, after: 2n ** 62n });
    const second = await client.listPlants(first.next ?? undefined);
    expect(second).toEqual({ plants: TAGGED.slice(4), next: null });
    expect(server.requests[1]?.url).toBe(`/plants?limit=4&tag=${TAG_IN_QUERY}&after=4611686018427387904`);
  });

  it.each([
    ['limit 0', { limit: 0 }, 'limit must be an integer between 1 and 100'],
    ['limit 101', { limit: 101 }, 'limit must be an integer between 1 and 100'],
    ['a fractional limit', { limit: 1.5 }, 'limit must be an integer between 1 and 100'],
    ['after beyond int64', { after: INT64_MAX + 1n }, /^after must be an integer between/],
    ['a tag of 256 characters', { tag: 't'.repeat(256) }, 'tag must be a string of at most 255 characters'],
  ])('refuses %s with error 400 and sends nothing', async (_label, query, message) => {
    const server = await startScriptedServer([]);
    const error = await caught(createTestClient(server.url).listPlants(query));
    expect(error).toMatchObject({ kind: 'invalid-input', status: 0, error: 400 });
    expect(error.message).toMatch(message);
    expect(server.requests).toHaveLength(0);
  });

  it.each([
    ['ids out of order', { limit: 5 }, '[{"id":2,"name":"a"},{"id":1,"name":"b"}]', 'id 1 does not come after 2'],
    ['a repeated id', { limit: 5 }, '[{"id":2,"name":"a"},{"id":2,"name":"b"}]', 'id 2 does not come after 2'],
    ['an id not after `after`', { after: 5n }, '[{"id":5,"name":"a"}]', 'id 5 does not come after 5'],
    [
      'more plants than limit',
      { limit: 1 },
      '[{"id":1,"name":"a"},{"id":2,"name":"b"}]',
      '2 plants, more than limit 1',
    ],
    ['another tag', { tag: 'x' }, '[{"id":1,"name":"a","tag":"y"}]', 'plant 1 is not tagged "x"'],
    ['no tag when one was asked', { tag: 'x' }, '[{"id":1,"name":"a"}]', 'plant 1 is not tagged "x"'],
    ['an object', {}, '{"id":1,"name":"a"}', 'Invalid type: Expected Array'],
  ])('refuses a page with %s as breaking the contract', async (_label, query, body, message) => {
    const server = await startScriptedServer([json(200, body)]);
    const error = await caught(createTestClient(server.url).listPlants(query));
    expect(error).toMatchObject({ kind: 'invalid-response', status: 200, error: 0 });
    expect(error.message).toContain(message);
  });
});

describe('plants (the iterator)', () => {
  it.each(LINK_STYLES)(
    'follows a %s Link rel="next" across 3 pages of a tag with spaces and unicode',
    async (_label, linkStyle) => {
      const server = await startScriptedServer(pagingScript(STORE, linkStyle));
      const seen: StoredPlant[] = [];
      for await (const plant of createTestClient(server.url).plants({ tag: TAG, pageSize: 2 })) seen.push(plant);
      expect(seen).toStrictEqual(TAGGED);
      expect(server.requests.map((request) => request.url)).toEqual([
        `/plants?limit=2&tag=${TAG_IN_QUERY}`,
        `/plants?limit=2&tag=${TAG_IN_QUERY}&after=-1`,
        `/plants?limit=2&tag=${TAG_IN_QUERY}&after=4611686018427387904`,
      ]);
    },
  );

  it.each(LINK_STYLES)('walks every plant (%s Link), from `after` when given', async (_label, linkStyle) => {
    const server = await startScriptedServer(pagingScript(STORE, linkStyle));
    const client = createTestClient(server.url);
    const all: StoredPlant[] = [];
    for await (const plant of client.plants()) all.push(plant);
    expect(all).toStrictEqual(STORE);
    const rest: StoredPlant[] = [];
    for await (const plant of client.plants({ after: 0n, pageSize: 1 })) rest.push(plant);
    expect(rest).toStrictEqual(STORE.slice(4));
    expect(server.requests.map((request) => request.url)).toEqual([
      '/plants?limit=20',
      '/plants?limit=1&after=0',
      '/plants?limit=1&after=9007199254740993',
      '/plants?limit=1&after=4611686018427387904',
    ]);
  });

  it('fetches pages only as the loop asks: breaking early sends no further request', async () => {
    const server = await startScriptedServer(pagingScript(STORE));
    for await (const plant of createTestClient(server.url).plants({ pageSize: 2 })) {
      expect(plant.id).toBe(INT64_MIN);
      break;
    }
    expect(server.requests).toHaveLength(1);
  });

  it('yields nothing for an empty store', async () => {
    const server = await startScriptedServer(pagingScript([]));
    const seen: StoredPlant[] = [];
    for await (const plant of createTestClient(server.url).plants()) seen.push(plant);
    expect(seen).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a page that answers 503, and goes on', async () => {
    const paging = pagingScript(STORE);
    const script: ScriptFunction = (request, index) =>
      index === 1
        ? errorAnswer(503, 503, 'the database is unavailable', { 'Retry-After': '0' })
        : paging(request, index);
    const server = await startScriptedServer(script);
    const seen: StoredPlant[] = [];
    for await (const plant of createTestClient(server.url).plants({ pageSize: 4 })) seen.push(plant);
    expect(seen).toStrictEqual(STORE);
    expect(server.requests.map((request) => request.url)).toEqual([
      '/plants?limit=4',
      '/plants?limit=4&after=0',
      '/plants?limit=4&after=0',
    ]);
  });

  it('throws, rather than loop forever, when the next link does not move forward', async () => {
    const stuck: ScriptedAnswer = json(200, '[{"id":1,"name":"a"}]', { Link: '</plants?limit=1&after=0>; rel="next"' });
    const server = await startScriptedServer(() => stuck);
    const seen: bigint[] = [];
    const error = await caught(
      (async () => {
        for await (const plant of createTestClient(server.url).plants({ pageSize: 1 })) seen.push(plant.id);
      })(),
    );
    expect(error).toMatchObject({ kind: 'invalid-response' });
    expect(error.message).toContain('does not move past after=0');
    expect(seen).toEqual([1n]);
    expect(server.requests).toHaveLength(2);
  });

  it('refuses an invalid page size on the first step, sending nothing', async () => {
    const server = await startScriptedServer([]);
    const iterator = createTestClient(server.url).plants({ pageSize: 0 });
    expect(await caught(iterator.next())).toMatchObject({ kind: 'invalid-input', error: 400 });
    expect(server.requests).toHaveLength(0);
  });
});

describe('a base URL with a path prefix', () => {
  it.each([
    ['/store', 'query-only', 'query-only'],
    ['/store/', 'query-only', 'query-only'],
    ['/store', 'path-absolute', { pathPrefix: '/store' }],
    ['/store/', 'path-absolute', { pathPrefix: '/store' }],
  ] as const)('keeps the prefix %s in every path and follows %s links under it', async (prefix, _label, linkStyle) => {
    const server = await startScriptedServer(pagingScript(STORE, linkStyle));
    const client = createTestClient(`${server.url}${prefix}`);
    const seen: StoredPlant[] = [];
    for await (const plant of client.plants({ pageSize: 3 })) seen.push(plant);
    expect(seen).toStrictEqual(STORE);
    expect(server.requests.map((request) => request.url)).toEqual([
      '/store/plants?limit=3',
      '/store/plants?limit=3&after=-1',
      '/store/plants?limit=3&after=4611686018427387904',
    ]);
  });

  it('sends create, get and delete under the prefix', async () => {
    const server = await startScriptedServer([
      json(200, '{"id":5,"name":"Fern"}'),
      json(200, '{"id":5,"name":"Fern"}'),
      { status: 204 },
    ]);
    const client = createTestClient(`${server.url}/a/b/`);
    await client.createPlant({ id: 5n, name: 'Fern' });
    await client.getPlant(5n);
    await client.deletePlant(5n);
    expect(server.requests.map(({ method, url }) => `${method} ${url}`)).toEqual([
      'POST /a/b/plants',
      'GET /a/b/plants/5',
      'DELETE /a/b/plants/5',
    ]);
  });

  it('follows query-only links behind a proxy that strips the prefix: the service never sees it', async () => {
    // The script ignores the path, as a service behind a stripping proxy would see only /plants.
    const server = await startScriptedServer(pagingScript(STORE, 'query-only'));
    const seen: StoredPlant[] = [];
    for await (const plant of createTestClient(`${server.url}/gateway/store/`).plants({ pageSize: 4 }))
      seen.push(plant);
    expect(seen).toStrictEqual(STORE);
    expect(server.requests.map((request) => request.url)).toEqual([
      '/gateway/store/plants?limit=4',
      '/gateway/store/plants?limit=4&after=0',
    ]);
  });

  it('refuses a path-absolute link that leaves the prefix instead of sending the token there', async () => {
    const server = await startScriptedServer(pagingScript(STORE, { pathPrefix: '' }));
    const error = await caught(createTestClient(`${server.url}/store/`).listPlants({ limit: 2 }));
    expect(error).toMatchObject({ kind: 'invalid-response', status: 200 });
    expect(error.message).toContain(`whose next page ${server.url}/plants is not ${server.url}/store/plants`);
    expect(server.requests).toHaveLength(1);
  });
});
