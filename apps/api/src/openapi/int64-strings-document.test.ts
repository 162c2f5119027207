import { type OperationDeclaration, type OperationId, operations, stringifyJson } from '@plant-store/schema';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { int64StringReader, isInt64Schema, stringifyJsonWithInt64Strings } from '../http/int64-form.js';
import { DOCUMENT_FORMATS } from '../test-support/openapi-contract.js';
import { OPERATION_EXAMPLES } from './examples.js';
import { INT64_STRING_PATTERN } from './int64-strings-document.js';
import { inlineJsonSchemaOf } from './json-schemas.js';
import { createOpenApiDocument } from './openapi-document.js';

type Json = Record<string, unknown>;

/** Each document as it is served: written with the exact codec, read back as plain JSON. */
const served = (int64Form: 'number' | 'string'): Json =>
  JSON.parse(stringifyJson(createOpenApiDocument({ bodyLimitBytes: 65_536, int64Form })));
const numbers = served('number');
const strings = served('string');

/** Every object in `node` with its JSON pointer. */
function* objectsOf(node: unknown, pointer = ''): Generator<[string, Json]> {
  if (typeof node !== 'object' || node === null) return;
  if (!Array.isArray(node)) yield [pointer, node as Json];
  for (const [key, child] of Object.entries(node)) {
    yield* objectsOf(child, `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`);
  }
}

function at(document: Json, pointer: string): unknown {
  return pointer
    .split('/')
    .slice(1)
    .map((key) => key.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<unknown>((node, key) => (node as Json | undefined)?.[key], document);
}

function ajvFor(document: Json, options: { unicodeRegExp?: boolean } = {}) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, ...options });
  for (const [name, format] of Object.entries(DOCUMENT_FORMATS)) ajv.addFormat(name, format);
  ajv.addSchema({ ...document, $id: 'openapi.json' }, 'openapi.json');
  return (pointer: string) => {
    const validate = ajv.getSchema(`openapi.json#${pointer}`);
    if (!validate) throw new Error(`no schema at ${pointer}`);
    return validate;
  };
}

const operationEntries = Object.entries(operations) as Array<[OperationId, OperationDeclaration]>;

describe('the document for Plant-Store-Int64: string (/openapi.json?int64=string)', () => {
  it('is valid OpenAPI 3.1', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(strings));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('types every int64 of the operations and components as a decimal string, at the same place', () => {
    const { webhooks: _, ...contract } = numbers;
    const int64s = [...objectsOf(contract)].filter(([, node]) => isInt64Schema(node));
    // Every id, `after` and path id: bodies, answers, parameters, components.
    expect(int64s.length).toBeGreaterThanOrEqual(10);
    for (const [pointer, { type: _type, format: _format, ...rest }] of int64s) {
      expect({ pointer, schema: at(strings, pointer) }).toEqual({
        pointer,
        schema: { type: 'string', pattern: INT64_STRING_PATTERN, ...rest },
      });
    }
    const { webhooks: __, ...stringContract } = strings;
    expect([...objectsOf(stringContract)].filter(([, node]) => node.format === 'int64')).toEqual([]);
  });

  it('declares the header on every operation of the contract, with the 400 another value gets', () => {
    const paths = strings.paths as Record<string, Json>;
    for (const [id, operation] of operationEntries) {
      const described = paths[operation.path]?.[operation.method.toLowerCase()] as Json;
      expect(described.operationId).toBe(id);
      expect(described.parameters).toContainEqual({ $ref: '#/components/parameters/int64Form' });
      const refused = (described.responses as Json)['400'] as Json;
      expect(JSON.stringify(refused), id).toContain('Plant-Store-Int64 must be \\"string\\" or \\"number\\"');
    }
    expect((strings.components as Json).parameters).toMatchObject({
      int64Form: { name: 'Plant-Store-Int64', in: 'header', schema: { type: 'string', enum: ['string'] } },
    });
    expect((numbers.components as Json).parameters).not.toHaveProperty('int64Form');
    expect(JSON.stringify(numbers.paths)).not.toContain('int64Form');
  });

  it('keeps the webhooks as the service sends them: JSON integers, their schemas written out in place', () => {
    const body = at(strings, '/webhooks/~1plant~1webhook/post/requestBody/content/application~1json/schema');
    expect(body).toEqual(at(numbers, '/components/schemas/NewPlant'));
    expect(JSON.stringify(strings.webhooks)).not.toContain('$ref');
    expect(at(strings, '/webhooks/~1plant~1webhook/post/requestBody/content/application~1json/examples')).toEqual(
      at(numbers, '/webhooks/~1plant~1webhook/post/requestBody/content/application~1json/examples'),
    );
  });

  it('has examples that its own schemas accept, ids as strings', () => {
    const schemaAt = ajvFor(strings);
    let checked = 0;
    for (const [pointer, node] of objectsOf(strings)) {
      if (!('schema' in node)) continue;
      const examples = [
        ...(typeof node.examples === 'object' ? Object.values(node.examples as Record<string, Json>) : []).map(
          (example) => example.value,
        ),
        ...('example' in node ? [node.example] : []),
      ];
      for (const example of examples) {
        const validate = schemaAt(`${pointer}/schema`);
        expect({ pointer, valid: validate(example), errors: validate.errors ?? null }).toEqual({
          pointer,
          valid: true,
          errors: null,
        });
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(40);
    expect(at(strings, '/components/parameters/id/example')).toBe('4201');
  });

  it("describes each operation's answers as the service writes them in that form (every example, every operation)", () => {
    // What the HTTP layer writes under the header, from the values the handlers return.
    const paths = strings.paths as Record<string, Json>;
    const schemaAt = ajvFor(strings);
    let checked = 0;
    for (const [id, operation] of operationEntries) {
      const examples = OPERATION_EXAMPLES[id] as { success?: Record<string, unknown> };
      for (const value of Object.values(examples.success ?? {})) {
        // A streamed answer's schema is its lines'.
        const mediaType = operation.streamed === 'response' ? 'application~1x-ndjson' : 'application~1json';
        const pointer = `/paths/${operation.path.replaceAll('/', '~1')}/${operation.method.toLowerCase()}/responses/${operation.success.status}/content/${mediaType}/schema`;
        expect(at(strings, pointer), id).toBeDefined();
        const validate = schemaAt(pointer);
        const written: unknown = JSON.parse(stringifyJsonWithInt64Strings(value));
        expect({ id, valid: validate(written), errors: validate.errors ?? null }).toEqual({
          id,
          valid: true,
          errors: null,
        });
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(operationEntries.filter(([, operation]) => operation.success.schema).length);
    expect(paths['/plants']).toBeDefined();
  });

  it('has a pattern that takes every int64 as the service writes it, in Unicode mode or not', () => {
    for (const unicodeRegExp of [true, false]) {
      const validate = ajvFor(strings, { unicodeRegExp })('/components/parameters/id/schema');
      for (const text of ['0', '-1', '9007199254740993', '-9223372036854775808', '9223372036854775807']) {
        expect(validate(text), text).toBe(true);
      }
      for (const text of ['', '007', '+1', '-0', '1.0', ' 1', '1e3', '12345678901234567890', '१२']) {
        expect(validate(text), text).toBe(false);
      }
    }
  });
});

describe('reading int64 strings in request bodies, from the body schema', () => {
  it('reads the int64 of every operation body, and nothing else', () => {
    const create = operations.createPlant.body.schema;
    const read = int64StringReader(inlineJsonSchemaOf(create));
    expect(read?.({ id: '9223372036854775807', name: '123', tag: '9' })).toEqual({
      id: 9223372036854775807n,
      name: '123',
      tag: '9',
    });
    // Numbers, and what is no decimal integer, are left for the schema to judge.
    expect(read?.({ id: 5n, name: 'Fern' })).toEqual({ id: 5n, name: 'Fern' });
    expect(read?.({ id: '5.0', name: 'Fern' })).toEqual({ id: '5.0', name: 'Fern' });
    expect(read?.({ name: 'Fern' })).toEqual({ name: 'Fern' });
    expect(read?.('not an object')).toBe('not an object');
    // A patch's id, when sent, is read as well.
    const patch = int64StringReader(inlineJsonSchemaOf(operations.updatePlant.body.schema));
    expect(patch?.({ id: '-9223372036854775808', tag: null })).toEqual({ id: -9223372036854775808n, tag: null });
    expect(patch?.({ name: '7' })).toEqual({ name: '7' });
    // A bulk resend's id bounds are read; its limit, an int32, is not.
    const resend = int64StringReader(inlineJsonSchemaOf(operations.resendWebhookDeliveries.body.schema));
    expect(resend?.({ after: '9223372036854775806', through: '9223372036854775807', limit: '5' })).toEqual({
      after: 9223372036854775806n,
      through: 9223372036854775807n,
      limit: '5',
    });
    // Bodies without an int64 have nothing to read.
    const withInt64s: readonly string[] = ['createPlant', 'importPlants', 'updatePlant', 'resendWebhookDeliveries'];
    for (const [id, operation] of operationEntries) {
      if (!operation.body || withInt64s.includes(id)) continue;
      expect(int64StringReader(inlineJsonSchemaOf(operation.body.schema)), id).toBeUndefined();
    }
  });

  it('follows arrays, records and unions, as a later body may have them', () => {
    const int64 = { type: 'integer', format: 'int64' };
    const read = int64StringReader({
      type: 'object',
      properties: {
        ids: { type: 'array', items: int64 },
        pair: { type: 'array', prefixItems: [{ type: 'string' }, int64] },
        byName: { type: 'object', additionalProperties: int64 },
        maybe: { anyOf: [int64, { type: 'null' }] },
        count: { type: 'integer', format: 'int32' },
      },
    });
    expect(
      read?.({ ids: ['1', 2n], pair: ['3', '4'], byName: { a: '-5' }, maybe: '6', count: '7', other: '8' }),
    ).toEqual({ ids: [1n, 2n], pair: ['3', 4n], byName: { a: -5n }, maybe: 6n, count: '7', other: '8' });
    expect(int64StringReader({ type: 'object', properties: { count: { type: 'integer', format: 'int32' } } })).toBe(
      undefined,
    );
  });
});
