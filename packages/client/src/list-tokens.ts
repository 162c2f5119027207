import { operations, type Token } from '@plant-store/schema';
import { callOperation } from './call-operation.js';
import type { CallOptions, ClientContext } from './client-context.js';

/** `GET /tokens`: every active token (expired ones too), oldest first, never a token itself. Retried like every read. */
export async function listTokens(context: ClientContext, options: CallOptions = {}): Promise<Token[]> {
  return (await callOperation(context, operations.listTokens, { params: {}, retryMode: 'idempotent' }, options)).output;
}
