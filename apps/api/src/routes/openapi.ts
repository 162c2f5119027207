import type Router from '@koa/router';
import { stringifyJson } from '@plant-store/schema';
import { invalidRequest } from '../http/api-error.js';
import type { AppState } from '../http/app-state.js';
import type { Int64Form } from '../http/int64-form.js';
import { readQueryParameters } from '../http/query.js';
import { respondJsonText } from '../http/respond-json.js';
import { DOCUMENT_FORM_MESSAGE, DOCUMENT_FORM_PARAMETER, type OpenApiDocument } from '../openapi/openapi-document.js';

/**
 * `GET /openapi.json`, without authentication: the description is public, the data is not.
 * `?int64=string` serves the document for clients that ask for int64s as strings.
 */
export function addOpenApiRoute(router: Router<AppState>, documents: Record<Int64Form, OpenApiDocument>): void {
  // Written once: the documents do not change while the service runs.
  const texts = { number: stringifyJson(documents.number), string: stringifyJson(documents.string) };
  router.get('/openapi.json', (ctx) => {
    const form = readQueryParameters(ctx.querystring, [DOCUMENT_FORM_PARAMETER])[DOCUMENT_FORM_PARAMETER] ?? 'number';
    if (form !== 'number' && form !== 'string') throw invalidRequest(DOCUMENT_FORM_MESSAGE);
    ctx.set('Cache-Control', 'no-cache');
    respondJsonText(ctx, 200, texts[form]);
  });
}
