import { readFileSync } from 'node:fs';
import { createTestStorage, type TestStorage, testToken } from '@plant-store/db/testing';
import { stringifyJson } from '@plant-store/schema';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ContractCheck, DOCUMENT_FORMATS, loadContract } from '../test-support/openapi-contract.js';
import { request, startTestService, type TestService } from '../test-support/test-service.js';
import { describeStatus, describeTimeout } from '../webhooks/attempt-messages.js';
import { checkWebhookUrl } from '../webhooks/url-policy.js';
import { createOpenApiDocument } from './openapi-document.js';

type Json = Record<string, unknown>;

const JSON_TYPE = 'application/json';

const upstreamSample: Json = JSON.parse(
  readFileSync(new URL('./fixtures/upstream-plant-store.json', import.meta.url), 'utf8'),
);
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

function operationsOf(document: Json): Array<{ path: string; method: string; operation: Json }> {
  return Object.entries(document.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ path, method, operation: operation as Json })),
  );
}

/** Follows a local `$ref` (`#/components/...`) to what it names. */
function resolve(document: Json, value: Json): Json {
  const ref = value.$ref;
  if (typeof ref !== 'string') return value;
  return ref
    .slice(2)
    .split('/')
    .reduce<Json>((node, key) => node[key] as Json, document);
}

describe('the OpenAPI document', () => {
  let storage: TestStorage;
  let service: TestService;
  let served: { status: number; headers: Headers; text: string; document: Json };

  beforeAll(async () => {
    storage = await createTestStorage('pglite', { migrated: true });
    service = await startTestService(storage);
    const response = await request(service.url, '/openapi.json');
    served = { ...response, document: JSON.parse(response.text) };
  });
  afterAll(async () => {
    await service?.close();
    await storage?.dispose();
  });

  it('is served without authentication as JSON, exactly as the service builds it', () => {
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(served.text).toBe(stringifyJson(createOpenApiDocument({ bodyLimitBytes: 65_536 })));
  });

  it('is valid OpenAPI 3.1 for @seriousme/openapi-schema-validator', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(served.document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('keeps example ids below 2^53, so that renderers reading doubles show them as written', () => {
    const ids = [...served.text.matchAll(/"(?:id|after)":(-?\d+)/g)].map((match) => BigInt(match[1] ?? '0'));
    expect(ids.length).toBeGreaterThan(5);
    for (const id of ids) expect(id < 2n ** 53n && id > -(2n ** 53n)).toBe(true);
    expect(served.document.info).toMatchObject({ description: expect.stringContaining('kept to the last digit') });
  });

  it('has examples that its own schemas accept (Ajv, JSON Schema 2020-12)', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    for (const [name, format] of Object.entries(DOCUMENT_FORMATS)) ajv.addFormat(name, format);
    ajv.addSchema({ ...served.document, $id: 'openapi.json' }, 'openapi.json');
    let checked = 0;
    const check = (pointer: string, example: unknown) => {
      const validate = ajv.getSchema(`openapi.json#${pointer}`);
      if (!validate) throw new Error(`no schema at ${pointer}`);
      expect({ pointer, valid: validate(example), errors: validate.errors ?? null }).toEqual({
        pointer,
        valid: true,
        errors: null,
      });
      checked++;
    };
    const escapePointer = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');
    // Media types: requests and responses, inline or under components.responses.
    const visit = (node: unknown, pointer: string) => {
      if (typeof node !== 'object' || node === null) return;
      const record = node as Json;
      if ('schema' in record && 'examples' in record && typeof record.examples === 'object') {
        for (const example of Object.values(record.examples as Record<string, Json>)) {
          check(`${pointer}/schema`, example.value);
        }
      }
      if ('schema' in record && 'example' in record) check(`${pointer}/schema`, record.example);
      for (const [key, child] of Object.entries(record)) visit(child, `${pointer}/${escapePointer(key)}`);
    };
    visit(served.document.paths, '/paths');
    visit(served.document.webhooks, '/webhooks');
    visit(served.document.components, '/components');
    expect(checked).toBeGreaterThan(40);
  });

  it('describes every operation with an operationId, bearer scopes or none, and its error responses', () => {
    const operations = operationsOf(served.document);
    expect(operations.map(({ method, path }) => `${method.toUpperCase()} ${path}`).sort()).toEqual([
      'DELETE /plants/{id}',
      'DELETE /tokens/{name}',
      'DELETE /webhooks/{id}',
      'GET /audit-events',
      'GET /console',
      'GET /docs',
      'GET /events',
      'GET /events/cursor',
      'GET /healthz',
      'GET /metrics',
      'GET /openapi.json',
      'GET /plants',
      'GET /plants/export',
      'GET /plants/{id}',
      'GET /readyz',
      'GET /tokens',
      'GET /version',
      'GET /webhooks',
      'GET /webhooks/{id}/deliveries',
      'PATCH /plants/{id}',
      'PATCH /webhooks/{id}',
      'POST /plants',
      'POST /plants/import',
      'POST /tokens',
      'POST /webhooks',
      'POST /webhooks/{id}/deliveries/resend',
      'POST /webhooks/{id}/deliveries/{deliveryId}/resend',
      'POST /webhooks/{id}/secret',
      'POST /webhooks/{id}/test',
    ]);
    for (const { path, operation } of operations) {
      expect(operation.operationId).toEqual(expect.any(String));
      const security = operation.security as Json[];
      if (path.startsWith('/plants') || path.startsWith('/events')) {
        expect(security).toHaveLength(1);
        // GET /events/cursor takes nothing a client could get wrong.
        const refusable = path === '/events/cursor' ? [] : ['400'];
        expect(Object.keys(operation.responses as Json)).toEqual(
          expect.arrayContaining([...refusable, '401', '403', '500', '503']),
        );
      } else if (path.startsWith('/webhooks') || path.startsWith('/tokens') || path === '/audit-events') {
        const scope = path.startsWith('/webhooks') ? 'webhooks:manage' : 'tokens:manage';
        // Subscribing, or changing a subscription, needs plants:read too: the events carry plants.
        if (operation.operationId === 'createWebhook' || operation.operationId === 'updateWebhook') {
          expect(security).toEqual([{ bearerAuth: [scope, 'plants:read'] }]);
          expect(operation.description).toContain('Requires the `webhooks:manage` and `plants:read` scopes.');
        } else {
          expect(security).toEqual([{ bearerAuth: [scope] }]);
          expect(operation.description).toContain(`Requires the \`${scope}\` scope.`);
        }
        expect(Object.keys(operation.responses as Json)).toEqual(expect.arrayContaining(['401', '403', '500', '503']));
        expect(resolve(served.document, (operation.responses as Record<string, Json>)['403'] as Json)).toMatchObject({
          content: {
            'application/json': {
              examples: { scope: { value: { error: 403, message: `this token lacks the ${scope} scope` } } },
            },
          },
        });
      } else {
        expect(security).toEqual([]);
      }
    }
  });

  it('answers every documented operation on a real route (never the router 404 or 405)', async () => {
    for (const { path, method } of operationsOf(served.document)) {
      const response = await request(service.url, path.replaceAll(/\{[^}]+\}/g, '1'), {
        method: method.toUpperCase(),
      });
      expect({ path, method, status: response.status }).not.toMatchObject({ status: 405 });
      expect(response.text).not.toContain('no route for');
    }
  });

  describe('webhooks', () => {
    it('describes the event as the upstream sample names it: POST /plant/webhook with a NewPlant body', () => {
      const webhooks = served.document.webhooks as Record<string, Json>;
      expect(Object.keys(webhooks)).toEqual([
        '/plant/webhook',
        'plant.created',
        'plant.updated',
        'plant.deleted',
        'webhook.test',
      ]);
      const post = (webhooks['/plant/webhook'] as Json).post as Json;
      expect(post).toMatchObject({
        security: [],
        requestBody: {
          description: 'Information about a new plant added to the store',
          required: true,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPlant' } } },
        },
      });
      expect(Object.keys(post.responses as Json)).toEqual(['2XX', 'default']);
      expect((post.responses as Record<string, Json>).default?.description).toContain('retried');
    });

    it('describes each event type as its envelope, and the test event, with the same headers', () => {
      const webhooks = served.document.webhooks as Record<string, Json>;
      for (const type of ['plant.created', 'plant.updated', 'plant.deleted', 'webhook.test']) {
        const post = (webhooks[type] as Json).post as Json;
        const content = ((post.requestBody as Json).content as Record<string, Json>)['application/json'] as Json;
        const schema = content.schema as Json;
        expect(schema.required).toEqual(['type', 'timestamp', 'data']);
        const example = Object.values(content.examples as Record<string, Json>)[0]?.value as Json;
        expect(example.type).toBe(type);
        expect(post.parameters).toEqual(((webhooks['/plant/webhook'] as Json).post as Json).parameters);
        if (type !== 'webhook.test') {
          expect(((schema.properties as Json).data as Json).required).toEqual(['id', 'name', 'version']);
          expect(post.description).toContain('drop an event whose version is not above it');
        }
      }
    });

    it('documents the three Standard Webhooks headers as required, with examples they accept', () => {
      const post = ((served.document.webhooks as Record<string, Json>)['/plant/webhook'] as Json).post as Json;
      const headers = (post.parameters as Json[]).map((parameter) => ({
        name: parameter.name,
        in: parameter.in,
        required: parameter.required,
      }));
      expect(headers).toEqual([
        { name: 'webhook-id', in: 'header', required: true },
        { name: 'webhook-timestamp', in: 'header', required: true },
        { name: 'webhook-signature', in: 'header', required: true },
      ]);
      for (const parameter of post.parameters as Json[]) {
        const schema = parameter.schema as Json;
        if (typeof schema.pattern === 'string') {
          expect(new RegExp(schema.pattern).test(String(parameter.example)), String(parameter.name)).toBe(true);
        }
      }
    });

    it("keeps the URL refusals it shows in step with the service's own messages", async () => {
      const post = ((served.document.paths as Record<string, Json>)['/webhooks'] as Json).post as Json;
      const content = ((post.responses as Record<string, Json>)['400'] as Json).content as Json;
      const examples = (content['application/json'] as Json).examples as Record<string, { value: Json }>;
      const policy = { allowPrivateNetworks: false, resolve: async () => [] };
      expect(await checkWebhookUrl('https://127.0.0.1/', policy)).toBe(examples.private?.value.message);
      expect(await checkWebhookUrl('https://hooks.invalid/', policy)).toBe(examples.unresolvable?.value.message);
    });

    it('shows delivery attempts with the errors the dispatcher records, and resends as they work', () => {
      const at = (...keys: string[]): unknown =>
        keys.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], served.document);
      const listed = at('paths', '/webhooks/{id}/deliveries', 'get', 'responses', '200', 'content', JSON_TYPE);
      const deliveries = (listed as { examples: { page: { value: Array<{ attempts: Json[] }> } } }).examples.page.value;
      const attempts = deliveries.flatMap((delivery) => delivery.attempts);
      expect(attempts.length).toBeGreaterThan(1);
      for (const { statusCode, error } of attempts) {
        expect(error ?? null).toBe(
          statusCode === undefined ? describeTimeout(10_000) : describeStatus(Number(statusCode)),
        );
      }
      // A resend adds one attempt: a delivery that had used its schedule fails again if that one fails.
      const resend = at('paths', '/webhooks/{id}/deliveries/{deliveryId}/resend', 'post', 'description');
      expect(resend).toContain('a failed one gets that one attempt');
      expect(resend).not.toContain('new series');
    });
  });

  describe('compatibility with the upstream "OpenAPI Plant Store" sample', () => {
    it('keeps its operations, parameters, request body and statuses', () => {
      const ours = new Map(operationsOf(served.document).map((entry) => [`${entry.method} ${entry.path}`, entry]));
      for (const { path, method, operation: theirs } of operationsOf(upstreamSample)) {
        const entry = ours.get(`${method} ${path}`);
        expect(entry, `${method} ${path}`).toBeDefined();
        if (!entry) continue;
        const pathItem = (served.document.paths as Record<string, Json>)[path] as Json;
        const ourParameters = [
          ...((pathItem.parameters as Json[]) ?? []),
          ...((entry.operation.parameters as Json[]) ?? []),
        ]
          .map((parameter) => resolve(served.document, parameter))
          .map((parameter): Json => ({ ...parameter, schema: resolve(served.document, parameter.schema as Json) }));
        for (const parameter of (theirs.parameters as Json[]) ?? []) {
          const match = ourParameters.find((candidate) => candidate.name === parameter.name);
          expect(match, `${method} ${path} parameter ${parameter.name}`).toMatchObject({
            in: parameter.in,
            ...(parameter.required ? { required: true } : {}),
            schema: parameter.schema as Json,
          });
        }
        for (const status of Object.keys(theirs.responses as Json)) {
          expect(Object.keys(entry.operation.responses as Json), `${method} ${path}`).toContain(status);
        }
        if (theirs.requestBody) {
          expect(entry.operation.requestBody).toMatchObject({
            required: true,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPlant' } } },
          });
        }
      }
      const schemas = (served.document.components as Json).schemas as Record<string, Json>;
      // Its Plant is our StoredPlant: the same fields, and the id (which its Plant allows) required.
      const theirPlant = ((upstreamSample.components as Json).schemas as Record<string, Json>).Plant as Json;
      expect(schemas.StoredPlant).toMatchObject({
        type: 'object',
        required: ['id', ...(theirPlant.required as string[])],
      });
      for (const [name, property] of Object.entries(theirPlant.properties as Record<string, Json>)) {
        expect(schemas.StoredPlant?.properties, name).toHaveProperty(
          name,
          expect.objectContaining({ type: property.type }),
        );
      }
      expect(schemas.NewPlant).toMatchObject({ required: ['id', 'name'], properties: { id: { format: 'int64' } } });
      expect(schemas.Error).toMatchObject({
        required: ['error', 'message'],
        properties: { error: { type: 'integer', format: 'int32' }, message: { type: 'string' } },
      });
      expect((served.document.components as Json).securitySchemes).toMatchObject({
        bearerAuth: { type: 'http', scheme: 'bearer' },
      });
    });

    it("answers the sample's operations with responses its document accepts", async () => {
      const sample = await loadContract(upstreamSample);
      const token = (
        await service.db.issueToken(testToken({ name: 'sample', scopes: ['plants:read', 'plants:write'] }))
      ).token;
      const exchanges: Array<[string, string, string | undefined]> = [
        ['POST', '/plants', '{"id": 9007199254740993, "name": "Monstera", "tag": "aroid"}'],
        ['POST', '/plants', '{"id": 9007199254740993, "name": "Other"}'],
        ['POST', '/plants', '{"id": "1", "name": "Fern"}'],
        ['GET', '/plants?limit=1', undefined],
        ['GET', '/plants?limit=0', undefined],
        ['DELETE', '/plants/9007199254740993', undefined],
        ['DELETE', '/plants/abc', undefined],
      ];
      const statuses: number[] = [];
      for (const [method, path, body] of exchanges) {
        const response = await request(service.url, path, { method, token, ...(body ? { body } : {}) });
        statuses.push(response.status);
        expect(sample.check(method, new URL(path, service.url).href, response), `${method} ${path}`).toEqual([]);
      }
      expect(statuses).toEqual([200, 400, 400, 200, 400, 204, 400]);
    });
  });

  describe('the response checker the HTTP tests use', () => {
    let contract: ContractCheck;
    beforeAll(async () => {
      contract = await loadContract(served.document);
    });
    const json = { 'content-type': 'application/json; charset=utf-8' };
    const WEBHOOK_ID = '0b8f7f9e-4f0c-4a57-9c59-6d8e3f1f2a10';
    const webhook = `{"id":"${WEBHOOK_ID}","url":"https://8.8.8.8/hook","team":"default","createdAt":"2026-11-23T10:48:07.123Z","eventTypes":["plant.created"],"enabled":true}`;
    const check = (
      method: string,
      path: string,
      status: number,
      text: string,
      headers: Record<string, string> = json,
    ) => contract.check(method, new URL(path, service.url).href, { status, headers: new Headers(headers), text });

    it('accepts what the contract says', () => {
      expect(check('GET', '/plants/1', 200, '{"id":1,"name":"Fern"}', { ...json, etag: '"7"' })).toEqual([]);
      expect(check('GET', '/plants/1', 200, '{"id":1,"name":"Fern"}')).toEqual([
        'GET /plants/{id} 200: required header ETag is missing',
      ]);
      expect(check('GET', '/plants', 200, '[]')).toEqual([]);
      expect(check('DELETE', '/plants/1', 204, '', {})).toEqual([]);
      expect(check('GET', '/webhooks', 200, `[${webhook}]`)).toEqual([]);
      expect(check('POST', '/webhooks', 201, `${webhook.slice(0, -1)},"secret":"whsec_c2VjcmV0"}`)).toEqual([]);
      expect(check('DELETE', `/webhooks/${WEBHOOK_ID}`, 204, '', {})).toEqual([]);
    });

    it('checks the formats of webhook answers: uuid, date-time, status, int64 ids', () => {
      expect(check('GET', '/webhooks', 200, `[${webhook.replace(WEBHOOK_ID, '42')}]`)).not.toEqual([]);
      expect(check('GET', '/webhooks', 200, `[${webhook.replace('T10:48:07.123Z', ' 10:48')}]`)).not.toEqual([]);
      expect(check('POST', '/webhooks', 200, webhook)).not.toEqual([]);
      expect(check('POST', '/webhooks', 201, webhook)).not.toEqual([]);
      const delivery = `{"id":1,"webhookId":"${WEBHOOK_ID}","eventId":"msg_${WEBHOOK_ID}","plantId":5,"status":"pending","createdAt":"2026-11-23T10:48:07.123Z","attempts":[]}`;
      const deliveries = `/webhooks/${WEBHOOK_ID}/deliveries`;
      expect(check('GET', deliveries, 200, `[${delivery}]`)).toEqual([]);
      expect(check('GET', deliveries, 200, `[${delivery.replace('pending', 'retrying')}]`)).not.toEqual([]);
      expect(check('GET', deliveries, 200, `[${delivery.replace('"plantId":5', '"plantId":"5"')}]`)).not.toEqual([]);
      expect(check('POST', `${deliveries}/1/resend`, 202, delivery)).toEqual([]);
      expect(check('POST', `${deliveries}/1/resend`, 200, delivery)).not.toEqual([]);
    });

    it('catches a wrong body, an undocumented status, a missing header and a wrong content type', () => {
      expect(check('GET', '/plants/1', 200, '{"id":1,"name":5}')).not.toEqual([]);
      expect(check('GET', '/plants/1', 200, '{"name":"Fern"}')).not.toEqual([]);
      expect(check('GET', '/plants', 200, '{"id":1,"name":"Fern"}')).not.toEqual([]);
      expect(check('GET', '/plants/1', 409, '{"error":409,"message":"x"}')).not.toEqual([]);
      expect(check('POST', '/plants', 401, '{"error":401,"message":"x"}')).not.toEqual([]);
      expect(check('GET', '/plants/1', 200, '<html></html>', { 'content-type': 'text/html' })).not.toEqual([]);
      expect(check('DELETE', '/plants/1', 204, '{}', {})).not.toEqual([]);
      expect(check('GET', '/plants/1', 404, '{"error":"404","message":"x"}')).not.toEqual([]);
      expect(check('PUT', '/nope', 200, '{}')).not.toEqual([]);
    });
  });
});
