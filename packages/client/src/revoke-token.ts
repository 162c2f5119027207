import { operations } from '@plant-store/schema';
import type { CallOptions, ClientContext } from './client-context.js';
import { sendDelete } from './send-delete.js';

/**
 * `DELETE /tokens/{name}`: resolves when the token is revoked (on every replica within 5 s); a
 * PlantStoreError with `error` 404 when no active token has the name. Retried as `deletePlant` is
 * (see sendDelete): only on the service's own 503/429 Error, and a retry answered 404 resolves.
 */
export async function revokeToken(context: ClientContext, name: string, options: CallOptions = {}): Promise<void> {
  await sendDelete(context, operations.revokeToken, { name }, options);
}
