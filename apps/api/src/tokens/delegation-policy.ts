import type { Caller } from '../http/caller.js';
import type { RateLimitPolicy } from '../rate-limits/rate-limit-policy.js';

/** What a team's token may grant when it issues a token (see checkGrant). */
export interface DelegationPolicy {
  /** The longest lifetime a team may grant, in days; null: any (TOKEN_MAX_LIFETIME_DAYS=off). */
  readonly maxLifetimeDays: number | null;
  /** The largest rate limit a team may grant; null: any (TOKEN_MAX_RATE_LIMIT=off). */
  readonly maxRateLimit: RateLimitPolicy | null;
  /** The limit of a token without one of its own (TOKEN_RATE_LIMIT); null: such tokens are not limited. */
  readonly defaultRateLimit: RateLimitPolicy | null;
}

/** What a token asks to grant: the parts of a new token the policy judges. */
export interface Grant {
  readonly team?: string | undefined;
  readonly scopes: readonly string[];
  readonly expiresAt?: Date | undefined;
  readonly rateLimit?: RateLimitPolicy | undefined;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** The 403 for a scope the issuing token does not hold. */
export function scopeNotHeldMessage(withheld: readonly string[]): string {
  return `this token cannot grant ${withheld.join(', ')}: a token grants only scopes it holds itself`;
}

/** The 403 for another team, without platform:admin. */
export function otherTeamMessage(ownTeam: string): string {
  return `only a token with platform:admin may issue tokens for another team than its own ("${ownTeam}")`;
}

/** The 403 for a lifetime beyond TOKEN_MAX_LIFETIME_DAYS. */
export function lifetimeMessage(maxLifetimeDays: number, expiresAtGiven: boolean): string {
  return expiresAtGiven
    ? `expiresAt is further away than the ${maxLifetimeDays} days a team may grant (TOKEN_MAX_LIFETIME_DAYS)`
    : `a team's tokens must expire within ${maxLifetimeDays} days (TOKEN_MAX_LIFETIME_DAYS): set expiresAt`;
}

/** The 403 for a rate limit beyond TOKEN_MAX_RATE_LIMIT (`limit` null: none at all). */
export function rateLimitMessage(limit: RateLimitPolicy | null, max: RateLimitPolicy): string {
  const most = `${max.requests}/${max.perSeconds}`;
  return limit === null
    ? `a team's tokens must be rate limited to at most ${most} (TOKEN_MAX_RATE_LIMIT): set rateLimit`
    : `rateLimit ${limit.requests}/${limit.perSeconds} is larger than the ${most} a team may grant (TOKEN_MAX_RATE_LIMIT)`;
}

/**
 * Judges a token's request to issue another, as a delegation that never escalates: the new token
 * is of the caller's own team (only platform:admin names another), carries only scopes the caller
 * holds, and, unless the caller holds platform:admin, lives no longer and may send no faster than
 * the platform allows. A token without `expiresAt` counts as living for ever; one without a rate
 * limit of its own has the service's default, and with the default off counts as unlimited. A rate
 * limit is larger than another when it allows more requests a second on average, or more in one
 * window. The team the token belongs to, or why not (a 403's message, naming the rule).
 */
export function checkGrant(
  caller: Caller,
  grant: Grant,
  policy: DelegationPolicy,
  now: number,
): { readonly team: string } | { readonly refusal: string } {
  const team = grant.team ?? caller.token.team;
  if (team !== caller.token.team && !caller.admin) {
    return {
      refusal: `only a token with platform:admin may issue tokens for another team than its own ("${caller.token.team}")`,
    };
  }
  const withheld = grant.scopes.filter((scope) => !caller.token.scopes.includes(scope));
  if (withheld.length > 0) {
    return { refusal: `this token cannot grant ${withheld.join(', ')}: a token grants only scopes it holds itself` };
  }
  if (caller.admin) return { team };
  const { maxLifetimeDays, maxRateLimit } = policy;
  if (maxLifetimeDays !== null) {
    if (grant.expiresAt === undefined) {
      return {
        refusal: `a team's tokens must expire within ${maxLifetimeDays} days (TOKEN_MAX_LIFETIME_DAYS): set expiresAt`,
      };
    }
    if (grant.expiresAt.getTime() - now > maxLifetimeDays * DAY_MS) {
      return {
        refusal: `expiresAt is further away than the ${maxLifetimeDays} days a team may grant (TOKEN_MAX_LIFETIME_DAYS)`,
      };
    }
  }
  if (maxRateLimit !== null) {
    const limit = grant.rateLimit ?? policy.defaultRateLimit;
    const max = `${maxRateLimit.requests}/${maxRateLimit.perSeconds}`;
    if (limit === null) {
      return {
        refusal: `a team's tokens must be rate limited to at most ${max} (TOKEN_MAX_RATE_LIMIT): set rateLimit`,
      };
    }
    if (isLarger(limit, maxRateLimit)) {
      return {
        refusal: `rateLimit ${limit.requests}/${limit.perSeconds} is larger than the ${max} a team may grant (TOKEN_MAX_RATE_LIMIT)`,
      };
    }
  }
  return { team };
}

/** More requests a second on average, or more in one window. */
function isLarger(limit: RateLimitPolicy, max: RateLimitPolicy): boolean {
  return limit.requests * max.perSeconds > max.requests * limit.perSeconds || limit.requests > max.requests;
}
