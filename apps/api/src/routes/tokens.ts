import { type Database, TokenLimitError, TokenNameTakenError, TokenNotFoundError } from '@plant-store/db';
import { ErrorCode } from '@plant-store/schema';
import { ApiError, invalidRequest } from '../http/api-error.js';
import { actorOf, teamScopeOf } from '../http/caller.js';
import { checkGrant, type DelegationPolicy } from '../tokens/delegation-policy.js';
import { toIssueOptions } from '../tokens/issue-options.js';
import type { HandlersOf } from './mount-operations.js';
import { toCreatedToken, toToken } from './tokens-wire.js';

export interface TokenHandlersOptions {
  readonly db: Pick<Database, 'issueToken' | 'listTokens' | 'revokeToken'>;
  /** What a team's token may grant. */
  readonly delegation: DelegationPolicy;
  /** Most active tokens one team may hold. */
  readonly perTeamLimit: number;
}

/**
 * Issuing, listing and revoking bearer tokens (the `tokens:manage` scope): a team's own, as a
 * delegation that never escalates (see checkGrant); another team's token answers 404 as if it did
 * not exist, unless the caller holds platform:admin.
 */
export function tokenHandlers({ db, delegation, perTeamLimit }: TokenHandlersOptions): HandlersOf<'tokens'> {
  return {
    listTokens: async (_input, caller) => (await db.listTokens(teamScopeOf(caller))).map(toToken),
    createToken: async ({ body }, caller) => {
      const now = Date.now();
      const options = toIssueOptions(body, now);
      if ('refusal' in options) throw invalidRequest(options.refusal);
      const grant = checkGrant(caller, { ...options, team: body.team }, delegation, now);
      if ('refusal' in grant) throw new ApiError(ErrorCode.NotAllowed, grant.refusal);
      try {
        return toCreatedToken(
          await db.issueToken({ ...options, team: grant.team, teamLimit: perTeamLimit, actor: actorOf(caller) }),
        );
      } catch (error) {
        if (error instanceof TokenNameTakenError || error instanceof TokenLimitError) {
          throw new ApiError(ErrorCode.Conflict, error.message);
        }
        throw error;
      }
    },
    revokeToken: async ({ params: { name } }, caller) => {
      try {
        await db.revokeToken(name, { ...teamScopeOf(caller), actor: actorOf(caller) });
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
