import {
  ErrorCode,
  OPERATION_TAGS,
  PLANTS_PAGE_DEFAULT_LIMIT,
  SCOPE_DESCRIPTIONS,
  SCOPES,
  ServiceVersionSchema,
} from '@plant-store/schema';
import { INT64_HEADER, type Int64Form } from '../http/int64-form.js';
import {
  AUTHENTICATION_REQUIRED_MESSAGE,
  EXPIRED_TOKEN_MESSAGE,
  INVALID_TOKEN_MESSAGE,
  MISSING_SCHEME_MESSAGE,
  REALM,
  tooManyFailuresMessage,
} from '../middleware/bearer-auth.js';
import { overLimitMessage } from '../middleware/limit-token-rate.js';
import { EXAMPLE_NEXT_AFTER } from './examples.js';
import { withInt64Strings } from './int64-strings-document.js';
import { componentSchemas, inlineJsonSchemaOf } from './json-schemas.js';
import { errorContent, errorExample, JSON_TYPE, ref } from './openapi-parts.js';
import { operationPaths, parameterComponents } from './operation-paths.js';
import { plantCreatedWebhook } from './plant-created-webhook.js';
import { plantEventWebhooks } from './plant-event-webhooks.js';

/** An OpenAPI 3.1 document: plain JSON data (ids in examples are bigints, written exactly). */
export type OpenApiDocument = Record<string, unknown>;

export interface OpenApiDocumentOptions {
  /** The request body limit the service enforces, in bytes. */
  readonly bodyLimitBytes: number;
  /** Whether this port serves `GET /metrics` (default true). */
  readonly metrics?: boolean;
  /**
   * How int64s travel (default `number`): `string` describes the service as a client that sends
   * `Plant-Store-Int64: string` sees it (served at `/openapi.json?int64=string`).
   */
  readonly int64Form?: Int64Form;
}

/** The query parameter of `GET /openapi.json` that chooses the document, and its refusal. */
export const DOCUMENT_FORM_PARAMETER = 'int64';
export const DOCUMENT_FORM_MESSAGE = `query parameter ${DOCUMENT_FORM_PARAMETER} must be "number" or "string"`;

/** What the document says about ids, as a client of each form sees them. */
const EXACT_IDS: Record<Int64Form, string> = {
  number: [
    "- **Exact ids.** `id` is an int64 written as a plain JSON integer; values beyond 2^53 are kept to the last digit. Parse responses with a JSON reader that keeps big integers (JavaScript: `@plant-store/schema`'s `parseJson`).",
    `A client that cannot (JavaScript's \`JSON.parse\`, and so most clients generated from this document, reads 9007199254740993 as 9007199254740992) sends \`${INT64_HEADER}: string\` with every request: every int64 in the answer is then a decimal string, and int64s in its body may be sent as strings too; \`/openapi.json?${DOCUMENT_FORM_PARAMETER}=string\` is this document as such a client sees it, to generate a client from. Another value of the header than \`string\` or \`number\` (the default) is answered 400. Webhook bodies carry JSON integers always.`,
  ].join(' '),
  string: [
    `- **Ids as strings.** This document describes the service as it answers requests that carry \`${INT64_HEADER}: string\` (set it once, as a default header of your client): every int64 (\`id\`, \`after\`, \`plantId\`, ...) is a decimal string in answers, bodies, paths and queries alike (\`"9007199254740993"\`), so that a client whose JSON reader makes doubles keeps every id exact. Bodies may still send JSON integers.`,
    `Without the header the service writes JSON integers, as \`/openapi.json\` describes; another value than \`string\` or \`number\` is answered 400. The answer repeats \`${INT64_HEADER}: string\` when it was honoured.`,
    'Webhook bodies are requests the service sends, not answers: they carry JSON integers always, as `webhooks` below shows (read them with a JSON reader that keeps big integers).',
  ].join(' '),
};

/**
 * The service's OpenAPI 3.1 document. The operations are written from the schema package's
 * operations table (see operation-paths.ts), shapes from its valibot schemas (json-schemas.ts);
 * the HTTP tests check every response they receive against this.
 * Compatible with the upstream "OpenAPI Plant Store" sample (1.0.0): the same paths, methods,
 * parameters and shapes; its `Plant` responses are `StoredPlant` here, the same `name` and `tag`
 * with the plant's `id`, which its `Plant` allows.
 */
export function createOpenApiDocument({
  bodyLimitBytes,
  metrics = true,
  int64Form = 'number',
}: OpenApiDocumentOptions): OpenApiDocument {
  const unauthorized = {
    description: 'No bearer token, or one that is not valid (unknown, revoked or expired). `error` is 401.',
    headers: { 'WWW-Authenticate': ref('headers/WWW-Authenticate') },
    content: errorContent([ErrorCode.NotAuthenticated], {
      missing: errorExample(ErrorCode.NotAuthenticated, AUTHENTICATION_REQUIRED_MESSAGE, 'No Authorization header'),
      scheme: errorExample(ErrorCode.NotAuthenticated, MISSING_SCHEME_MESSAGE, 'No Bearer scheme word'),
      invalid: errorExample(ErrorCode.NotAuthenticated, INVALID_TOKEN_MESSAGE, 'Unknown or revoked token'),
      expired: errorExample(ErrorCode.NotAuthenticated, EXPIRED_TOKEN_MESSAGE, 'Expired token'),
    }),
  };

  const document = {
    openapi: '3.1.0',
    info: {
      title: 'Plant Store',
      version: '1.0.0',
      license: { name: 'MIT', identifier: 'MIT' },
      contact: { name: 'The Plant Store team' },
      summary:
        'A store of plants: create, list, fetch and delete them by their int64 id; webhooks announce every plant created.',
      description: [
        'Compatible with the "OpenAPI Plant Store" sample interface 1.0.0.',
        '',
        EXACT_IDS[int64Form],
        '- **Errors** are always `application/json` in the `Error` shape. `error` is the precise reason as an HTTP code: 400 invalid request, 401 not authenticated, 403 not allowed, 404 not found, 405 method not allowed, 409 conflict, 413 body too large, 415 not JSON, 429 too many requests (retry after `Retry-After` seconds), 500 internal, 503 database unavailable (retry after `Retry-After` seconds).',
        '- **Rate limits:** each token may send a number of requests per window: its own `rateLimit`, else the service\'s default. Every answer to an authenticated request carries the `RateLimit-Policy` and `RateLimit` fields of draft-ietf-httpapi-ratelimit-headers-10 (`RateLimit-Policy: "token";q=1000;w=10`, `RateLimit: "token";r=998;t=7`: quota, window, remaining and seconds until the window ends); over the limit the answer is 429 with `Retry-After`. With several replicas the limit is shared through Redis when the service is configured with it. An address with too many failed authentications (20 a minute by default) is answered 429 for tokens that replica has not seen work, until its window ends.',
        '- **POST /plants** answers HTTP 400 for every failure caused by what the client sent, with `error` 400, 409, 413 or 415; other operations answer the HTTP status that `error` names.',
        '- **Other paths and methods:** paths match exactly: case-sensitive, and a trailing slash makes another path (`/PLANTS` and `/plants/1/` answer 404). An unknown path answers 404 for every method, a known path with a method it does not serve 405 with an `Allow` header, both in the `Error` shape. As HTTP provides, `HEAD` is answered like `GET` without a body, and `OPTIONS` on a known path answers 200 with `Allow`. `/docs/` redirects to `/docs`, whose page loads its static files from `/docs/assets/`.',
        `- **Authentication:** \`Authorization: Bearer <token>\`; tokens carry the scopes ${listed(SCOPES.map((scope) => `\`${scope}\``))}. A token with \`tokens:manage\` issues, lists and revokes tokens under \`/tokens\`; a token may expire (\`expiresAt\`), and is refused from that instant with 401 \`error="invalid_token"\`.`,
        '- **Webhooks:** register a receiver with `POST /webhooks` (scope `webhooks:manage`); every plant created is then POSTed to it, signed as Standard Webhooks specify (see `webhooks` below, `/plant/webhook`), delivered at least once with retries. Its deliveries and their attempts are listed under `GET /webhooks/{id}/deliveries`.',
        "- **Request ids:** every response carries `X-Request-Id`: the one the request sent, when it is 1-128 characters of `[A-Za-z0-9._:-]`, else a new UUID. Quote it when reporting a problem; it is in the service's logs.",
      ].join('\n'),
    },
    // Relative to where this document is served: right behind a proxy that adds a path prefix.
    servers: [{ url: '.', description: 'This service' }],
    security: [{ bearerAuth: [] }],
    tags: [
      ...Object.entries(OPERATION_TAGS).map(([name, description]) => ({ name, description })),
      { name: 'service', description: 'Probes and this description' },
    ],
    paths: {
      ...operationPaths({ bodyLimitBytes }),
      '/openapi.json': documentOperation(),
      '/docs': serviceOperation(
        'getDocsPage',
        'The interactive API reference (this document, rendered)',
        {
          '200': { description: 'An HTML page', content: { 'text/html': { schema: { type: 'string' } } } },
        },
        'Swagger UI over `/openapi.json`, served from the service itself (no external resources). No token needed.',
      ),
      '/console': serviceOperation(
        'getConsole',
        'The console: a page to see and fix your plants, tokens and webhooks',
        {
          '200': { description: 'An HTML page', content: { 'text/html': { schema: { type: 'string' } } } },
        },
        "A single page served by the service itself (no external resources, a strict Content-Security-Policy). No token needed to load it; it asks for one, keeps it in the tab's sessionStorage only, and calls this API with it.",
      ),
      '/healthz': serviceOperation(
        'checkLiveness',
        'Liveness: the process answers (does not touch the database)',
        { '200': statusResponse('ok') },
        'For liveness probes: 200 while the process serves requests, whatever the database does. No token needed. With `METRICS_PORT` set, also served on that port.',
      ),
      '/readyz': serviceOperation(
        'checkReadiness',
        'Readiness: the database answers',
        { '200': statusResponse('ready'), '503': ref('responses/DatabaseUnavailable') },
        'For readiness probes: 200 when the database answers a query, 503 with `Retry-After` when it does not. No token needed. With `METRICS_PORT` set, also served on that port.',
      ),
      '/version': serviceOperation(
        'getVersion',
        "The service's release",
        {
          '200': {
            description: 'Which release answers',
            content: {
              [JSON_TYPE]: {
                schema: inlineJsonSchemaOf(ServiceVersionSchema),
                example: { version: '1.0.0' },
              },
            },
          },
        },
        "The service's version (its package's semver), for a console's health strip or a rollout check. No token needed.",
      ),
      ...(metrics
        ? {
            '/metrics': serviceOperation(
              'getMetrics',
              'Prometheus metrics',
              {
                '200': {
                  description: 'The Prometheus text exposition format, version 0.0.4',
                  content: { 'text/plain': { schema: { type: 'string' } } },
                },
              },
              'Request counts and durations by method, route pattern and status; database call durations by operation and outcome; process metrics. Operational figures only: no token, id or plant data.',
            ),
          }
        : {}),
    },
    webhooks: { ...plantCreatedWebhook(), ...plantEventWebhooks() },
    components: {
      schemas: componentSchemas(),
      parameters: {
        ...parameterComponents(),
        'If-Match': {
          name: 'If-Match',
          in: 'header',
          description:
            'RFC 9110 13.1.1: only while the plant has one of these versions (its `ETag`s, strong comparison), or `*`; otherwise 412. A weak tag never matches.',
          schema: { type: 'string' },
          example: '"17"',
        },
        'If-None-Match': {
          name: 'If-None-Match',
          in: 'header',
          description:
            'RFC 9110 13.1.2: 304 without a body when the plant still has one of these versions (the `ETag` the client holds), or for `*`.',
          schema: { type: 'string' },
          example: '"17"',
        },
      },
      headers: {
        ETag: {
          description:
            "The plant's version, a strong entity tag (RFC 9110 8.8.3): new at every create and change, never repeated for an id (across a delete and a re-create too). Send it back in `If-Match` or `If-None-Match`.",
          required: true,
          schema: { type: 'string' },
          example: '"17"',
        },
        Link: {
          description:
            'RFC 8288. Present when more results follow: `rel="next"` names the next page as a query-only URI reference, to be resolved against this request\'s URL (RFC 3986 section 5), e.g. `<?limit=20&after=4201>; rel="next"`. Absent on the last page.',
          schema: { type: 'string' },
          example: `<?limit=${PLANTS_PAGE_DEFAULT_LIMIT}&after=${EXAMPLE_NEXT_AFTER}>; rel="next"`,
        },
        'WWW-Authenticate': {
          description:
            'RFC 6750 bearer challenge, with `error="invalid_token"` (a bearer credential that is not valid) or `error="insufficient_scope"` when it applies; without an error code when no bearer credential was sent.',
          required: true,
          schema: { type: 'string' },
          example: `${REALM}, error="invalid_token"`,
        },
        'Retry-After': {
          description: 'Seconds to wait before retrying.',
          required: true,
          schema: { type: 'integer', minimum: 0 },
          example: 1,
        },
        'RateLimit-Policy': {
          description:
            "The token's quota policy, as draft-ietf-httpapi-ratelimit-headers-10 writes it: `q` requests per window of `w` seconds (a Structured Field list).",
          schema: { type: 'string' },
          example: '"token";q=1000;w=10',
        },
        RateLimit: {
          description:
            "The token's service limit, as draft-ietf-httpapi-ratelimit-headers-10 writes it: `r` requests remain in this window, which ends in `t` seconds.",
          schema: { type: 'string' },
          example: '"token";r=0;t=7',
        },
      },
      responses: {
        Unauthorized: unauthorized,
        TooManyRequests: {
          description:
            "Too many requests: the token is over its rate limit (its own, else the service's default; the answer then carries the RateLimit fields), or the client's address has had too many failed authentications and sent a token this replica has not seen work. Retry after `Retry-After` seconds. `error` is 429.",
          headers: {
            'Retry-After': ref('headers/Retry-After'),
            'RateLimit-Policy': ref('headers/RateLimit-Policy'),
            RateLimit: ref('headers/RateLimit'),
          },
          content: errorContent([ErrorCode.TooManyRequests], {
            token: errorExample(
              ErrorCode.TooManyRequests,
              overLimitMessage({ requests: 1000, perSeconds: 10 }, 7),
              'Over the token’s rate limit',
            ),
            address: errorExample(
              ErrorCode.TooManyRequests,
              tooManyFailuresMessage(42),
              'Too many failed authentications from the address',
            ),
          }),
        },
        InternalError: {
          description: 'An unexpected server-side fault. `error` is 500.',
          content: errorContent([ErrorCode.Internal], {
            internal: errorExample(ErrorCode.Internal, 'internal error', 'Internal error'),
          }),
        },
        DatabaseUnavailable: {
          description: 'The database is unavailable; retry after `Retry-After` seconds. `error` is 503.',
          headers: { 'Retry-After': ref('headers/Retry-After') },
          content: errorContent([ErrorCode.DatabaseUnavailable], {
            unavailable: errorExample(
              ErrorCode.DatabaseUnavailable,
              'the database is unavailable; retry shortly',
              'Database unavailable',
            ),
          }),
        },
      },
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: `An opaque token (\`pst_...\`) issued with \`POST /tokens\` (scope \`tokens:manage\`) or \`pnpm run token create\`. Scopes: ${SCOPES.map((scope) => `\`${scope}\` (${SCOPE_DESCRIPTIONS[scope]})`).join(', ')}.`,
        },
      },
    },
  };
  return int64Form === 'string' ? withInt64Strings(document) : document;
}

/** `GET /openapi.json`: this document, in either form. */
function documentOperation() {
  const operation = serviceOperation(
    'getOpenApiDocument',
    'This OpenAPI document',
    {
      '200': { description: 'The OpenAPI 3.1 document', content: { [JSON_TYPE]: { schema: { type: 'object' } } } },
      '400': {
        description: `The \`${DOCUMENT_FORM_PARAMETER}\` query parameter is neither \`number\` nor \`string\`, or given twice. \`error\` is 400.`,
        content: errorContent([ErrorCode.InvalidRequest], {
          form: errorExample(ErrorCode.InvalidRequest, DOCUMENT_FORM_MESSAGE, 'Another form'),
        }),
      },
    },
    'This description of the service, as it runs: limits and optional paths follow its configuration. No token needed.',
  );
  const parameter = {
    name: DOCUMENT_FORM_PARAMETER,
    in: 'query',
    description: `How int64s (ids) are written: \`number\` (the default), JSON integers; \`string\`, decimal strings, the document for clients that send \`${INT64_HEADER}: string\` with every request (for clients generated by tools whose JSON reader makes doubles, such as openapi-typescript).`,
    schema: { type: 'string', enum: ['number', 'string'], default: 'number' },
    example: 'string',
  };
  const { responses, ...described } = operation.get;
  return { get: { ...described, parameters: [parameter], responses } };
}

/** A GET outside the contract's operations (probes, this description), open to every caller. */
function serviceOperation(operationId: string, summary: string, responses: object, description?: string) {
  return {
    get: { operationId, tags: ['service'], summary, ...(description ? { description } : {}), security: [], responses },
  };
}

function statusResponse(status: string) {
  const schema = { type: 'object', required: ['status'], properties: { status: { type: 'string', const: status } } };
  return { description: `The service is ${status}`, content: { [JSON_TYPE]: { schema } } };
}

/** `a`, `a and b`, `a, b and c`. */
function listed(items: readonly string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}
