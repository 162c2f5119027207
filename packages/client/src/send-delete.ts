import type { OperationDeclaration, PathParametersOf } from '@plant-store/schema';
import { callOperation } from './call-operation.js';
import type { CallOptions, ClientContext } from './client-context.js';
import type { PlantStoreError } from './plant-store-error.js';

/**
 * A delete (`deletePlant`, `deleteWebhook`), sent as every delete of this API is.
 *
 * Retried only when the service itself answered its Error body with `error` 503 or 429. Any
 * other failure is thrown at once: after a lost answer, a timeout or a gateway's 502/503/504
 * (which may have forwarded the request) the delete may have happened.
 *
 * The service may also answer 503 when its database connection was lost after the delete
 * committed. So when a retry (attempt 2 or later) is answered 404 by the service, the call
 * resolves: the thing is gone, which is what was asked. (It then cannot tell whether this call
 * deleted it, or whether it was already gone before.)
 */
export async function sendDelete<TOperation extends OperationDeclaration>(
  context: ClientContext,
  operation: TOperation,
  params: PathParametersOf<TOperation>,
  options: CallOptions,
  headers?: Readonly<Record<string, string>>,
): Promise<void> {
  await callOperation(
    context,
    operation,
    {
      params,
      retryMode: 'unprocessed-only',
      doneByEarlierAttempt: isNotFound,
      ...(headers === undefined ? {} : { headers }),
    },
    options,
  );
}

/** The service's own 404 Error: nothing there (a gateway's 404 page is not the service speaking). */
function isNotFound(error: PlantStoreError): boolean {
  return error.kind === 'error-response' && error.status === 404 && error.error === 404;
}
