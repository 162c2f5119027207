import type { IssueTokenOptions } from '@plant-store/db';
import type { NewToken } from '@plant-store/schema';

export const EXPIRES_AT_IN_PAST_MESSAGE = 'expiresAt must be in the future';

/** What a new token is, once judged: everything the repository needs but who issues it, for which team, under which cap. */
export type TokenRequest = Omit<IssueTokenOptions, 'team' | 'actor' | 'teamLimit'>;

/**
 * What the repository is asked to issue for a new token the contract's schema accepted (over HTTP
 * or from the token command), or why it cannot be: the schema judges the form, this the clock.
 */
export function toIssueOptions(newToken: NewToken, now: number): TokenRequest | { readonly refusal: string } {
  const expiresAt = newToken.expiresAt === undefined ? undefined : new Date(newToken.expiresAt);
  if (expiresAt !== undefined && !(expiresAt.getTime() > now)) return { refusal: EXPIRES_AT_IN_PAST_MESSAGE };
  return {
    name: newToken.name,
    scopes: newToken.scopes,
    ...(expiresAt === undefined ? {} : { expiresAt }),
    ...(newToken.rateLimit === undefined ? {} : { rateLimit: newToken.rateLimit }),
  };
}
