import { isRfc3339DateTime } from '@plant-store/schema';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { OpenAPIBackend, type Operation, SetMatchType } from 'openapi-backend';

/**
 * Checks HTTP responses against the service's own OpenAPI document with third-party
 * validators: openapi-backend matches the operation and validates the status, headers and
 * body, on Ajv's JSON Schema 2020-12 dialect (what OpenAPI 3.1 schemas are written in).
 */
export interface ContractCheck {
  /** Checks one response; returns what does not match (empty when it all does). */
  check(method: string, url: string, response: CheckedResponse): string[];
}

export interface CheckedResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/**
 * The formats the document uses, checked for real (Ajv knows none of them by itself: unknown
 * formats would be ignored, with a warning each). Ajv reads JSON numbers as doubles, where
 * INT64_MAX rounds up to 2^63: the integer formats bound the double range inclusively.
 * Exactness itself is proven by the byte-for-byte HTTP tests.
 */
export const DOCUMENT_FORMATS = {
  int32: { type: 'number', validate: (value: number) => Number.isInteger(value) && Math.abs(value + 0.5) <= 2 ** 31 },
  int64: { type: 'number', validate: (value: number) => Number.isInteger(value) && Math.abs(value) <= 2 ** 63 },
  'date-time': { type: 'string', validate: isRfc3339DateTime },
  uuid: { type: 'string', validate: (value: string) => UUID.test(value) },
  iri: { type: 'string', validate: (value: string) => URL.canParse(value) },
} as const;

const UUID = /^[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}$/i;

export async function loadContract(document: unknown): Promise<ContractCheck> {
  const api = new OpenAPIBackend({
    definition: structuredClone(document) as never,
    strict: true,
    // `quick` skips openapi-backend's own check of the document, which knows OpenAPI 3.0 only;
    // the document is validated as 3.1 by @seriousme/openapi-schema-validator in
    // openapi-document.test.ts. Responses are still validated, with the Ajv 2020 below.
    quick: true,
    validate: true,
    customizeAjv: (_ajv, options) => {
      const ajv = new Ajv2020({ ...options, strict: false });
      for (const [name, format] of Object.entries(DOCUMENT_FORMATS)) ajv.addFormat(name, format);
      return ajv;
    },
  });
  await api.init();
  return {
    check(method, url, response) {
      const { pathname, search } = new URL(url);
      const operation = api.matchOperation({ method, path: pathname, query: search.slice(1), headers: {} });
      if (!operation) return checkUnmatched(response);
      return checkOperation(api, operation, response);
    },
  };
}

function checkOperation(api: OpenAPIBackend, operation: Operation, response: CheckedResponse): string[] {
  const label = `${operation.method.toUpperCase()} ${operation.path} ${response.status}`;
  const documented = operation.responses?.[String(response.status)];
  if (!documented) return [`${label}: status not documented`];
  const problems: string[] = [];
  const contentType = response.headers.get('content-type')?.split(';')[0]?.trim() ?? null;
  const documentedTypes = Object.keys(('content' in documented && documented.content) || {});
  if (documentedTypes.length === 0) {
    if (response.text !== '') problems.push(`${label}: documented without a body, but one came`);
  } else if (contentType === null || !documentedTypes.includes(contentType)) {
    problems.push(`${label}: content type ${contentType} is not one of ${documentedTypes.join(', ')}`);
  } else if (contentType === 'application/json') {
    const body = api.validator.validateResponse(JSON.parse(response.text), operation, response.status);
    for (const error of body.errors ?? []) problems.push(`${label}: body${error.instancePath} ${error.message}`);
  }
  // openapi-backend checks the headers that came against their schemas; which ones must come
  // (`required: true`) it does not read, so that is checked here.
  const headers = api.validator.validateResponseHeaders(Object.fromEntries(response.headers), operation, {
    statusCode: response.status,
    setMatchType: SetMatchType.Any,
  });
  for (const error of headers.errors ?? []) problems.push(`${label}: headers${error.instancePath} ${error.message}`);
  const documentedHeaders = ('headers' in documented && documented.headers) || {};
  for (const [name, header] of Object.entries(documentedHeaders)) {
    if ('required' in header && header.required && !response.headers.has(name)) {
      problems.push(`${label}: required header ${name} is missing`);
    }
  }
  return problems;
}

/** Unknown paths and methods are in no operation; the contract still says: Error shape, 404/405. */
function checkUnmatched(response: CheckedResponse): string[] {
  if (response.status !== 404 && response.status !== 405) {
    return [`unmatched operation answered ${response.status}, not 404 or 405`];
  }
  const body: unknown = JSON.parse(response.text);
  const isError =
    typeof body === 'object' &&
    body !== null &&
    'error' in body &&
    body.error === response.status &&
    'message' in body &&
    typeof body.message === 'string';
  return isError ? [] : [`unmatched operation answered ${response.text}, not an Error with error ${response.status}`];
}
