import { type CreatedToken, type NewTokenInput, operations } from '@plant-store/schema';
import { callOperation } from './call-operation.js';
import type { CallOptions, ClientContext } from './client-context.js';

/**
 * `POST /tokens`: issues a bearer token and returns its record with the token itself, which is
 * shown this once only. The body is checked here before sending (name, known scopes, the form of
 * `expiresAt`, the rate limit's range); whether `expiresAt` lies in the future is the service's
 * check (a 400).
 *
 * Retried only when the service itself answered its Error body with `error` 503 or 429: after a
 * lost answer the token may have been issued, and a retry would answer 409 (the name is taken)
 * without the token. `listTokens` tells what exists; revoke it and issue another.
 */
export async function createToken(
  context: ClientContext,
  token: NewTokenInput,
  options: CallOptions = {},
): Promise<CreatedToken> {
  const { input, output, violation } = await callOperation(
    context,
    operations.createToken,
    { params: {}, body: token, retryMode: 'unprocessed-only' },
    options,
  );
  if (output.name !== input.body.name) throw violation(`name ${output.name} is not ${input.body.name}`);
  return output;
}
