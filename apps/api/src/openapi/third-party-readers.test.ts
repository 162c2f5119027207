/**
 * The document as third-party tools read it (issue 29, item 8): validators that compile its
 * patterns with or without the `u` flag agree with the service, it names nothing it does not
 * define, and it defines nothing it does not use.
 */
import { testToken } from '@plant-store/db/testing';
import { stringifyJson } from '@plant-store/schema';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENT_FORMATS } from '../test-support/openapi-contract.js';
import { startTestApp, type TestApp } from '../test-support/test-app.js';
import { createOpenApiDocument } from './openapi-document.js';

type Json = Record<string, unknown>;

const documents = {
  number: JSON.parse(stringifyJson(createOpenApiDocument({ bodyLimitBytes: 65_536 }))) as Json,
  string: JSON.parse(stringifyJson(createOpenApiDocument({ bodyLimitBytes: 65_536, int64Form: 'string' }))) as Json,
};

/** Names, for each kind of component, and what the document refers to. */
function componentsAndRefs(document: Json) {
  const defined = Object.entries(document.components as Record<string, Json>)
    .filter(([kind]) => kind !== 'securitySchemes')
    .flatMap(([kind, entries]) => Object.keys(entries).map((name) => `#/components/${kind}/${name}`));
  const refs = new Set([...JSON.stringify(document).matchAll(/"\$ref":"([^"]+)"/g)].map((match) => match[1]));
  return { defined, refs };
}

/** Texts the service stores or refuses, as names: astral characters, NUL, lone surrogates. */
const NAMES = [
  'Ficus 🌿',
  '🌿',
  'Monstera',
  'a\u{10FFFF}b',
  'nul\u0000inside',
  'lone high \uD83C',
  'lone low \uDF31',
  'reversed \uDF31\uD83C',
  '\uD83C\uDF31\uD83C',
];

describe.each(Object.keys(documents) as Array<keyof typeof documents>)(
  'the %s document for third-party tools',
  (form) => {
    const document = documents[form];

    it('uses every component it defines, and defines every one it uses (no unused Plant)', () => {
      const { defined, refs } = componentsAndRefs(document);
      expect(defined.filter((name) => !refs.has(name))).toEqual([]);
      expect([...refs].filter((ref) => !defined.includes(ref as string))).toEqual([]);
      expect(defined).not.toContain('#/components/schemas/Plant');
    });

    it('names no ErrorCode (a TypeScript constant); the Error description lists the codes', () => {
      expect(JSON.stringify(document)).not.toContain('ErrorCode');
      const error = ((document.components as Json).schemas as Record<string, Json>).Error as Json;
      const description = ((error.properties as Record<string, Json>).error as Json).description as string;
      for (const code of [400, 401, 403, 404, 405, 409, 413, 415, 429, 500, 503])
        expect(description).toContain(`${code} `);
    });
  },
);

describe('text patterns as validators compile them, against the service', () => {
  let app: TestApp;
  let token: string;
  beforeAll(async () => {
    app = await startTestApp('pglite');
    token = (await app.db.issueToken(testToken({ name: 'writer', scopes: ['plants:write'] }))).token;
  });
  afterAll(async () => {
    await app?.close();
  });

  it.each([
    ['ajv as configured by default (unicodeRegExp: the u flag)', true],
    ['ajv with unicodeRegExp: false, as Postman and plain RegExps read patterns', false],
  ])('%s accepts exactly the names the service stores', async (_, unicodeRegExp) => {
    const ajv = new Ajv2020({ strict: false, unicodeRegExp });
    for (const [name, format] of Object.entries(DOCUMENT_FORMATS)) ajv.addFormat(name, format);
    ajv.addSchema({ ...documents.number, $id: 'openapi.json' }, 'openapi.json');
    const validate = ajv.getSchema('openapi.json#/components/schemas/NewPlant');
    if (!validate) throw new Error('no NewPlant');
    let id = unicodeRegExp ? 1000 : 2000;
    const verdicts = [];
    for (const name of NAMES) {
      id++;
      for (const field of ['name', 'tag'] as const) {
        const body = field === 'name' ? { id, name } : { id, name: 'Fern', tag: name };
        const response = await fetch(new URL('/plants', app.url), {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        verdicts.push({ field, name, validator: validate(body), service: response.status === 200 });
        id++;
      }
    }
    expect(verdicts.filter(({ validator, service }) => validator !== service)).toEqual([]);
    // Both verdicts were drawn.
    expect(verdicts.filter(({ service }) => service).length).toBe(8);
  });
});
