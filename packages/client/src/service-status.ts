import { type ServiceVersion, ServiceVersionSchema } from '@plant-store/schema';
import type { CallOptions, ClientContext } from './client-context.js';
import { parseAnswer } from './parse-answer.js';
import { type PlantStoreRequest, sendRequest } from './send-request.js';

/** A probe of the service's own, outside the operations table: a GET that needs no token. */
function probe(context: ClientContext, path: string, options: CallOptions): PlantStoreRequest {
  return {
    method: 'GET',
    // Relative to the base URL, so that its path prefix is kept.
    url: new URL(path, context.baseUrl),
    successStatus: 200,
    retryMode: 'idempotent',
    signal: options.signal,
  };
}

/** `GET /version`: which release of the service answers. */
export async function getServiceVersion(context: ClientContext, options: CallOptions = {}): Promise<ServiceVersion> {
  const request = probe(context, 'version', options);
  return parseAnswer(ServiceVersionSchema, await sendRequest(context.transport, request), request);
}

/**
 * `GET /readyz`: resolves when the service is ready (its database answers); a PlantStoreError
 * with `error` 503 (and `retryAfterSeconds`) when it is not, once the retries are spent.
 */
export async function checkReadiness(context: ClientContext, options: CallOptions = {}): Promise<void> {
  await sendRequest(context.transport, probe(context, 'readyz', options));
}
