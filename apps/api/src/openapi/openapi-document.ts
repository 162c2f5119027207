import { PlantConflictError } from '@plant-store/db';
import {
  ErrorCode,
  ListPlantsQuerySchema,
  NewPlantSchema,
  PLANTS_PAGE_DEFAULT_LIMIT,
  PLANTS_PAGE_MAX_LIMIT,
  PlantIdSchema,
  type StoredPlant,
} from '@plant-store/schema';
import {
  AUTHENTICATION_REQUIRED_MESSAGE,
  INVALID_TOKEN_MESSAGE,
  MISSING_SCHEME_MESSAGE,
  REALM,
} from '../middleware/bearer-auth.js';
import { bodyTooLargeMessage, NOT_JSON_MESSAGE } from '../middleware/json-body.js';
import { componentSchemas, listPlantsQuerySchemas, plantIdParameterSchema, plantListSchema } from './json-schemas.js';
import {
  errorContent,
  errorExample,
  forbidden,
  JSON_TYPE,
  pageParameters,
  pageQueryRefused,
  ref,
  validationMessage,
} from './openapi-parts.js';
import { plantCreatedWebhook, webhookParameters, webhookPaths } from './webhook-paths.js';

/** An OpenAPI 3.1 document: plain JSON data (ids in examples are bigints, written exactly). */
export type OpenApiDocument = Record<string, unknown>;

export interface OpenApiDocumentOptions {
  /** The request body limit the service enforces, in bytes. */
  readonly bodyLimitBytes: number;
  /** Whether this port serves `GET /metrics` (default true). */
  readonly metrics?: boolean;
}

/**
 * Example ids stay below 2^53: documentation renderers (Swagger UI on /docs) read JSON numbers
 * as doubles and would show larger ones rounded. The description says ids are exact.
 */
const EXAMPLE_PLANT: StoredPlant = { id: 4201n, name: 'Monstera deliciosa', tag: 'aroid' };
const EXAMPLE_PLANTS: StoredPlant[] = [
  { id: 1n, name: 'Boston fern' },
  EXAMPLE_PLANT,
  { id: 5005n, name: 'Snake plant', tag: 'succulent' },
];

/**
 * The service's OpenAPI 3.1 document. Shapes come from the schema package's valibot schemas
 * (see json-schemas.ts); routes, statuses, headers and error codes are the ones the routes and
 * middleware answer, and the HTTP tests check every response they receive against this.
 * Compatible with the upstream "OpenAPI Plant Store" sample (1.0.0): the same paths, methods,
 * parameters and shapes; `Plant` responses also carry their `id`, which `Plant` allows.
 */
export function createOpenApiDocument({ bodyLimitBytes, metrics = true }: OpenApiDocumentOptions): OpenApiDocument {
  const query = listPlantsQuerySchemas();
  const plantPage = pageParameters(query, {
    noun: 'plants',
    defaultLimit: PLANTS_PAGE_DEFAULT_LIMIT,
    maxLimit: PLANTS_PAGE_MAX_LIMIT,
    exampleAfter: EXAMPLE_PLANT.id,
  });
  const bodyLimit = `${bodyLimitBytes} bytes`;

  const unauthorized = {
    description: 'No bearer token, or one that is not valid (unknown or revoked). `error` is 401.',
    headers: { 'WWW-Authenticate': ref('headers/WWW-Authenticate') },
    content: errorContent([ErrorCode.NotAuthenticated], {
      missing: errorExample(ErrorCode.NotAuthenticated, AUTHENTICATION_REQUIRED_MESSAGE, 'No Authorization header'),
      scheme: errorExample(ErrorCode.NotAuthenticated, MISSING_SCHEME_MESSAGE, 'No Bearer scheme word'),
      invalid: errorExample(ErrorCode.NotAuthenticated, INVALID_TOKEN_MESSAGE, 'Unknown or revoked token'),
    }),
  };
  const notFound = {
    description: 'No plant has this id. `error` is 404.',
    content: errorContent([ErrorCode.NotFound], {
      notFound: errorExample(ErrorCode.NotFound, `no plant with id ${EXAMPLE_PLANT.id}`, 'Unknown id'),
    }),
  };
  const invalidId = errorExample(
    ErrorCode.InvalidRequest,
    validationMessage(PlantIdSchema, 'abc'),
    'Path id is not an int64',
  );

  return {
    openapi: '3.1.0',
    info: {
      title: 'Plant Store',
      version: '1.0.0',
      summary:
        'A store of plants: create, list, fetch and delete them by their int64 id; webhooks announce every plant created.',
      description: [
        'Compatible with the "OpenAPI Plant Store" sample interface 1.0.0.',
        '',
        "- **Exact ids.** `id` is an int64 written as a plain JSON integer; values beyond 2^53 are kept to the last digit. Parse responses with a JSON reader that keeps big integers (JavaScript: `@plant-store/schema`'s `parseJson`).",
        '- **Errors** are always `application/json` in the `Error` shape. `error` is the precise reason as an HTTP code: 400 invalid request, 401 not authenticated, 403 not allowed, 404 not found, 405 method not allowed, 409 conflict, 413 body too large, 415 not JSON, 500 internal, 503 database unavailable (retry after `Retry-After` seconds).',
        '- **POST /plants** answers HTTP 400 for every failure caused by what the client sent, with `error` 400, 409, 413 or 415; other operations answer the HTTP status that `error` names.',
        '- **Other paths and methods:** paths match exactly: case-sensitive, and a trailing slash makes another path (`/PLANTS` and `/plants/1/` answer 404). An unknown path answers 404 for every method, a known path with a method it does not serve 405 with an `Allow` header, both in the `Error` shape. As HTTP provides, `HEAD` is answered like `GET` without a body, and `OPTIONS` on a known path answers 200 with `Allow`. `/docs/` redirects to `/docs`, whose page loads its static files from `/docs/assets/`.',
        '- **Authentication:** `Authorization: Bearer <token>`; tokens carry the scopes `plants:read`, `plants:write` and `webhooks:manage`.',
        '- **Webhooks:** register a receiver with `POST /webhooks` (scope `webhooks:manage`); every plant created is then POSTed to it, signed as Standard Webhooks specify (see `webhooks` below, `/plant/webhook`), delivered at least once with retries. Its deliveries and their attempts are listed under `GET /webhooks/{id}/deliveries`.',
        "- **Request ids:** every response carries `X-Request-Id`: the one the request sent, when it is 1-128 characters of `[A-Za-z0-9._:-]`, else a new UUID. Quote it when reporting a problem; it is in the service's logs.",
      ].join('\n'),
    },
    // Relative to where this document is served: right behind a proxy that adds a path prefix.
    servers: [{ url: '.', description: 'This service' }],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'plants', description: 'The plants in the store' },
      { name: 'webhooks', description: 'Receivers of plant-created events, and their deliveries' },
      { name: 'service', description: 'Probes and this description' },
    ],
    paths: {
      '/plants': {
        get: {
          operationId: 'listPlants',
          tags: ['plants'],
          summary: 'List plants',
          description: [
            'Returns the plants in the store, in ascending `id` order, one page at a time.',
            'When more plants follow, the `Link` header carries the next page (`rel="next"`); walk the store by following it, or pass the last `id` of a page as `after`.',
            'Requires the `plants:read` scope.',
          ].join(' '),
          security: [{ bearerAuth: ['plants:read'] }],
          parameters: [ref('parameters/limit'), ref('parameters/tag'), ref('parameters/after')],
          responses: {
            '200': {
              description: 'Plant response: the page of plants, in ascending id order (empty when none match).',
              headers: { Link: ref('headers/Link') },
              content: { [JSON_TYPE]: { schema: plantListSchema(), examples: { page: { value: EXAMPLE_PLANTS } } } },
            },
            '400': pageQueryRefused(ListPlantsQuerySchema, PLANTS_PAGE_MAX_LIMIT),
            '401': ref('responses/Unauthorized'),
            '403': forbidden('plants:read'),
            '500': ref('responses/InternalError'),
            '503': ref('responses/DatabaseUnavailable'),
          },
        },
        post: {
          operationId: 'createPlant',
          tags: ['plants'],
          summary: 'Create a plant',
          description: [
            'Creates a new plant in the store. Retry-safe: the same `id` with the same `name` and `tag` answers 200 again with the stored plant and changes nothing; the same `id` with other content answers 400 with `error` 409.',
            'A 200 means the plant is committed.',
            `Body: \`application/json\` (UTF-8), at most ${bodyLimit}; unknown fields are ignored.`,
            'Requires the `plants:write` scope.',
          ].join(' '),
          security: [{ bearerAuth: ['plants:write'] }],
          requestBody: {
            description: 'Plant to add to the store',
            required: true,
            content: {
              [JSON_TYPE]: {
                schema: ref('schemas/NewPlant'),
                examples: {
                  tagged: { value: { id: EXAMPLE_PLANT.id, name: EXAMPLE_PLANT.name, tag: EXAMPLE_PLANT.tag } },
                  untagged: { value: { id: 1n, name: 'Boston fern' } },
                },
              },
            },
          },
          responses: {
            '200': {
              description: 'Plant response: the stored plant, with its id.',
              content: {
                [JSON_TYPE]: { schema: ref('schemas/StoredPlant'), examples: { plant: { value: EXAMPLE_PLANT } } },
              },
            },
            '400': {
              description: `The request failed because of what the client sent; \`error\` names why: 400 invalid body, 409 the id exists with other content, 413 body over ${bodyLimit}, 415 not \`application/json\` or not UTF-8.`,
              content: errorContent(
                [ErrorCode.InvalidRequest, ErrorCode.Conflict, ErrorCode.BodyTooLarge, ErrorCode.UnsupportedMediaType],
                {
                  invalid: errorExample(
                    ErrorCode.InvalidRequest,
                    validationMessage(NewPlantSchema, { id: '1', name: 'Fern' }),
                    'Invalid id',
                  ),
                  name: errorExample(
                    ErrorCode.InvalidRequest,
                    validationMessage(NewPlantSchema, { id: 1, name: '' }),
                    'Invalid name',
                  ),
                  conflict: errorExample(
                    ErrorCode.Conflict,
                    new PlantConflictError(EXAMPLE_PLANT.id).message,
                    'Same id, other content',
                  ),
                  tooLarge: errorExample(ErrorCode.BodyTooLarge, bodyTooLargeMessage(bodyLimitBytes), 'Body too large'),
                  notJson: errorExample(ErrorCode.UnsupportedMediaType, NOT_JSON_MESSAGE, 'Not JSON'),
                },
              ),
            },
            '401': ref('responses/Unauthorized'),
            '403': forbidden('plants:write'),
            '500': ref('responses/InternalError'),
            '503': ref('responses/DatabaseUnavailable'),
          },
        },
      },
      '/plants/{id}': {
        parameters: [ref('parameters/id')],
        get: {
          operationId: 'getPlant',
          tags: ['plants'],
          summary: 'Fetch a plant',
          description: 'Returns the plant with this id. Requires the `plants:read` scope.',
          security: [{ bearerAuth: ['plants:read'] }],
          responses: {
            '200': {
              description: 'Plant response',
              content: {
                [JSON_TYPE]: { schema: ref('schemas/StoredPlant'), examples: { plant: { value: EXAMPLE_PLANT } } },
              },
            },
            '400': {
              description: 'The path id is not an int64. `error` is 400.',
              content: errorContent([ErrorCode.InvalidRequest], { invalidId }),
            },
            '401': ref('responses/Unauthorized'),
            '403': forbidden('plants:read'),
            '404': notFound,
            '500': ref('responses/InternalError'),
            '503': ref('responses/DatabaseUnavailable'),
          },
        },
        delete: {
          operationId: 'deletePlant',
          tags: ['plants'],
          summary: 'Delete a plant',
          description:
            'Deletes a single plant based on the ID supplied; afterwards the id may be created again. Requires the `plants:write` scope.',
          security: [{ bearerAuth: ['plants:write'] }],
          responses: {
            '204': { description: 'Plant deleted' },
            '400': {
              description: 'The path id is not an int64. `error` is 400.',
              content: errorContent([ErrorCode.InvalidRequest], { invalidId }),
            },
            '401': ref('responses/Unauthorized'),
            '403': forbidden('plants:write'),
            '404': notFound,
            '500': ref('responses/InternalError'),
            '503': ref('responses/DatabaseUnavailable'),
          },
        },
      },
      ...webhookPaths({ bodyLimitBytes }),
      '/openapi.json': {
        get: {
          operationId: 'getOpenApiDocument',
          tags: ['service'],
          summary: 'This OpenAPI document',
          security: [],
          responses: {
            '200': {
              description: 'The OpenAPI 3.1 document',
              content: { [JSON_TYPE]: { schema: { type: 'object' } } },
            },
          },
        },
      },
      '/docs': {
        get: {
          operationId: 'getDocsPage',
          tags: ['service'],
          summary: 'The interactive API reference (this document, rendered)',
          security: [],
          responses: {
            '200': { description: 'An HTML page', content: { 'text/html': { schema: { type: 'string' } } } },
          },
        },
      },
      '/healthz': {
        get: {
          operationId: 'checkLiveness',
          tags: ['service'],
          summary: 'Liveness: the process answers (does not touch the database)',
          security: [],
          responses: { '200': statusResponse('ok') },
        },
      },
      '/readyz': {
        get: {
          operationId: 'checkReadiness',
          tags: ['service'],
          summary: 'Readiness: the database answers',
          security: [],
          responses: { '200': statusResponse('ready'), '503': ref('responses/DatabaseUnavailable') },
        },
      },
      ...(metrics ? { '/metrics': metricsPathItem() } : {}),
    },
    webhooks: plantCreatedWebhook(),
    components: {
      schemas: componentSchemas(),
      parameters: {
        limit: plantPage.limit,
        tag: {
          name: 'tag',
          in: 'query',
          description: 'Only plants whose tag is exactly this text.',
          schema: query.tag,
        },
        after: plantPage.after,
        id: {
          name: 'id',
          in: 'path',
          description: 'ID of the plant',
          required: true,
          schema: plantIdParameterSchema(),
          example: EXAMPLE_PLANT.id,
        },
        ...webhookParameters(),
      },
      headers: {
        Link: {
          description:
            'RFC 8288. Present when more results follow: `rel="next"` names the next page as a query-only URI reference, to be resolved against this request\'s URL (RFC 3986 section 5), e.g. `<?limit=20&after=4201>; rel="next"`. Absent on the last page.',
          schema: { type: 'string' },
          example: `<?limit=${PLANTS_PAGE_DEFAULT_LIMIT}&after=${EXAMPLE_PLANT.id}>; rel="next"`,
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
      },
      responses: {
        Unauthorized: unauthorized,
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
          description:
            'An opaque token (`pst_...`) issued with `pnpm run token create`. Scopes: `plants:read` (list and fetch plants), `plants:write` (create and delete plants), `webhooks:manage` (register, list and delete webhooks; list and resend their deliveries).',
        },
      },
    },
  };
}

function metricsPathItem() {
  return {
    get: {
      operationId: 'getMetrics',
      tags: ['service'],
      summary: 'Prometheus metrics',
      description:
        'Request counts and durations by method, route pattern and status; database call durations by operation and outcome; process metrics. Operational figures only: no token, id or plant data.',
      security: [],
      responses: {
        '200': {
          description: 'The Prometheus text exposition format, version 0.0.4',
          content: { 'text/plain': { schema: { type: 'string' } } },
        },
      },
    },
  };
}

function statusResponse(status: string) {
  return {
    description: `The service is ${status}`,
    content: {
      [JSON_TYPE]: {
        schema: {
          type: 'object',
          required: ['status'],
          properties: { status: { type: 'string', const: status } },
        },
      },
    },
  };
}
