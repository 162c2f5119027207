import { type Database, TokenNameTakenError, TokenNotFoundError } from '@plant-store/db';
import { ErrorCode } from '@plant-store/schema';
import { ApiError, invalidRequest } from '../http/api-error.js';
import { toIssueOptions } from '../tokens/issue-options.js';
import type { HandlersOf } from './mount-operations.js';
import { toCreatedToken, toToken } from './tokens-wire.js';

export interface TokenHandlersOptions {
  readonly db: Pick<Database, 'issueToken' | 'listTokens' | 'revokeToken'>;
}

/** Issuing, listing and revoking bearer tokens (the `tokens:manage` scope). */
export function tokenHandlers({ db }: TokenHandlersOptions): HandlersOf<'tokens'> {
  return {
    listTokens: async () => (await db.listTokens()).map(toToken),
    createToken: async ({ body }) => {
      const options = toIssueOptions(body, Date.now());
      if ('refusal' in options) throw invalidRequest(options.refusal);
      try {
        return toCreatedToken(await db.issueToken(options));
      } catch (error) {
        if (error instanceof TokenNameTakenError) throw new ApiError(ErrorCode.Conflict, error.message);
        throw error;
      }
    },
    revokeToken: async ({ params: { name } }) => {
      try {
        await db.revokeToken(name);
      } catch (error) {
        if (error instanceof TokenNotFoundError) throw tokenNotFound(name);
        throw error;
      }
    },
  };
}

export function tokenNotFound(name: string): ApiError {
  return new ApiError(ErrorCode.NotFound, `no active token is named "${name}"`);
}
