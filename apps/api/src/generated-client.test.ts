/**
 * A team that generates its own client: openapi-typescript writes types from the served
 * document, a small program calls the service with openapi-fetch, and the project's tsc
 * typechecks and builds it, no hand edits. From `/openapi.json?int64=string`, with
 * `Plant-Store-Int64: string` as the client's default header, every id stays exact; from the
 * plain `/openapi.json`, without it, JSON.parse rounds ids beyond 2^53 and the client fetches
 * another plant: why the option exists. Both against the real service, on both engines, every
 * answer checked against the document of its form.
 */
import { createTestStorage, type TestStorage, testEngines, testToken } from '@plant-store/db/testing';
import { INT64_MAX, INT64_MIN } from '@plant-store/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkedFetch, failOnContractViolations } from './test-support/checked-fetch.js';
import { createGeneratedClientFolder, type GeneratedClientFolder } from './test-support/generated-client.js';
import { request, startTestService, type TestService } from './test-support/test-service.js';

failOnContractViolations();

/** What a team writes against the types generated from `/openapi.json?int64=string`. */
const STRINGS_PROGRAM = `import createClient from 'openapi-fetch';
import type { components, paths } from './strings-schema.js';

type Plant = components['schemas']['StoredPlant'];

export async function run(baseUrl: string, token: string, fetch: (request: Request) => Promise<Response>) {
  const client = createClient<paths>({
    baseUrl,
    fetch,
    headers: { Authorization: \`Bearer \${token}\`, 'Plant-Store-Int64': 'string' },
  });
  const ids: string[] = ['9007199254740993', '-9223372036854775808', '9223372036854775807'];
  const created: Plant[] = [];
  for (const id of ids) {
    const { data, error } = await client.POST('/plants', { body: { id, name: \`Ficus \${id}\` } });
    if (data === undefined) throw new Error(\`create \${id}: \${JSON.stringify(error)}\`);
    created.push(data);
  }
  const read: Plant[] = [];
  for (const plant of created) {
    // The id as the service gave it, typed string: no conversion anywhere.
    const id: string = plant.id;
    const { data } = await client.GET('/plants/{id}', { params: { path: { id } } });
    if (data === undefined) throw new Error(\`read \${id}\`);
    read.push(data);
  }
  const { data: page, response } = await client.GET('/plants', {
    params: { query: { after: '9007199254740992', limit: 2 } },
  });
  return { created, read, page, link: response.headers.get('link'), form: response.headers.get('plant-store-int64') };
}
`;

/** The same calls against the types generated from the plain `/openapi.json`, no header. */
const NUMBERS_PROGRAM = `import createClient from 'openapi-fetch';
import type { paths } from './numbers-schema.js';

export async function run(baseUrl: string, token: string, fetch: (request: Request) => Promise<Response>) {
  const client = createClient<paths>({ baseUrl, fetch, headers: { Authorization: \`Bearer \${token}\` } });
  const { data: page } = await client.GET('/plants', { params: { query: { after: 9007199254740991, limit: 2 } } });
  const ficus = page?.find((plant) => plant.name.startsWith('Ficus'));
  if (ficus === undefined) throw new Error('no Ficus listed');
  const id: number = ficus.id;
  const { data: fetched } = await client.GET('/plants/{id}', { params: { path: { id } } });
  return { listed: page?.map((plant) => ({ id: String(plant.id), name: plant.name })), ficusId: String(id), fetched };
}
`;

interface StringsRun {
  readonly created: unknown[];
  readonly read: unknown[];
  readonly page: unknown[];
  readonly link: string | null;
  readonly form: string | null;
}
interface NumbersRun {
  readonly listed: Array<{ id: string; name: string }>;
  readonly ficusId: string;
  readonly fetched: { id: number; name: string };
}
type Program<TResult> = { run(baseUrl: string, token: string, fetch: typeof checkedFetch): Promise<TResult> };

describe.each(testEngines())('a client generated with openapi-typescript and openapi-fetch, on %s', (engine) => {
  let storage: TestStorage;
  let service: TestService;
  let folder: GeneratedClientFolder;
  let token: string;
  let stringTypes: string;
  let numberTypes: string;

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    service = await startTestService(storage);
    token = (await service.db.issueToken(testToken({ name: 'team', scopes: ['plants:read', 'plants:write'] }))).token;
    folder = await createGeneratedClientFolder();
    stringTypes = await folder.generateTypes('strings-schema', new URL('/openapi.json?int64=string', service.url));
    numberTypes = await folder.generateTypes('numbers-schema', new URL('/openapi.json', service.url));
    await folder.writeProgram('strings-client', STRINGS_PROGRAM);
    await folder.writeProgram('numbers-client', NUMBERS_PROGRAM);
    await folder.compile();
  });
  afterAll(async () => {
    await service?.close();
    await storage?.dispose();
    await folder?.dispose();
  });

  it('generates string ids from /openapi.json?int64=string, and numbers from /openapi.json', () => {
    const storedPlant = (types: string) => /StoredPlant: \{[^}]*\};/.exec(types)?.[0].replaceAll(/\s+/g, ' ');
    console.log(`generated from /openapi.json?int64=string: ${storedPlant(stringTypes)}`);
    console.log(`generated from /openapi.json:              ${storedPlant(numberTypes)}`);
    expect(storedPlant(stringTypes)).toContain('id: string;');
    expect(storedPlant(numberTypes)).toContain('id: number;');
    expect(stringTypes).toContain('"Plant-Store-Int64"?: components["parameters"]["int64Form"];');
    expect(stringTypes).toContain('int64Form: "string";');
    expect(numberTypes).not.toContain('"Plant-Store-Int64"?');
  });

  it('has tsc check the program against those types: a number where the string document has a string is refused', async () => {
    const wrong = `import type { components } from './strings-schema.js';
export const id: number = ({ id: '1', name: 'Fern' } satisfies components['schemas']['StoredPlant']).id;
`;
    await folder.writeProgram('wrong-client', wrong);
    try {
      await expect(folder.compile()).rejects.toThrow(
        /wrong-client\.ts.*error TS2322: Type 'string' is not assignable to type 'number'/,
      );
    } finally {
      await folder.remove('wrong-client');
    }
  });

  it('keeps every id exact with the string document and the header, in bodies, paths, queries and answers', async () => {
    // A plant next to the one the other client will look for, created exactly.
    const decoy = await request(service.url, '/plants', { token, body: '{"id":9007199254740992,"name":"Decoy"}' });
    expect(decoy.status).toBe(200);

    const program = await folder.load<Program<StringsRun>>('strings-client');
    const result = await program.run(service.url, token, checkedFetch);
    console.log(`string ids: ${JSON.stringify(result)}`);
    const expected = [2n ** 53n + 1n, INT64_MIN, INT64_MAX].map((id) => ({ id: String(id), name: `Ficus ${id}` }));
    expect(result.created).toEqual(expected);
    expect(result.read).toEqual(expected);
    expect(result.page).toEqual([expected[0], expected[2]]);
    expect(result.link).toBeNull();
    expect(result.form).toBe('string');
    // Stored exactly: the plain document's exact reader sees the same ids.
    const stored = await request(service.url, `/plants/${INT64_MAX}`, { token });
    expect(stored.text).toBe(`{"id":${INT64_MAX},"name":"Ficus ${INT64_MAX}"}`);
  });

  it('without them, reads 9007199254740993 as 9007199254740992 and fetches another plant', async () => {
    const program = await folder.load<Program<NumbersRun>>('numbers-client');
    const result = await program.run(service.url, token, checkedFetch);
    console.log(`number ids: ${JSON.stringify(result)}`);
    // The service listed 9007199254740992 (Decoy) and 9007199254740993 (Ficus); JSON.parse made both ...992.
    expect(result.listed).toEqual([
      { id: '9007199254740992', name: 'Decoy' },
      { id: '9007199254740992', name: 'Ficus 9007199254740993' },
    ]);
    expect(result.ficusId).toBe('9007199254740992');
    expect(result.fetched.name).toBe('Decoy');
  });
});
