/** At most `requests` requests in each window of `perSeconds` seconds (a fixed window). */
export interface RateLimitPolicy {
  readonly requests: number;
  readonly perSeconds: number;
}

const POLICY = /^(\d{1,9})\/(\d{1,6})$/;

/**
 * `600/60` (600 requests per 60 s), as the settings write a policy; throws a message for anything
 * else. `off` is the caller's to handle.
 */
export function parseRateLimitPolicy(text: string, max: RateLimitPolicy): RateLimitPolicy {
  const match = POLICY.exec(text);
  const requests = Number(match?.[1]);
  const perSeconds = Number(match?.[2]);
  if (!match || requests < 1 || requests > max.requests || perSeconds < 1 || perSeconds > max.perSeconds) {
    throw new Error(
      `must be REQUESTS/SECONDS with 1-${max.requests} requests per 1-${max.perSeconds} seconds, e.g. 600/60`,
    );
  }
  return { requests, perSeconds };
}

/** What a limiter decided for one request. */
export interface RateLimitVerdict {
  readonly allowed: boolean;
  readonly policy: RateLimitPolicy;
  /** Requests left in the current window after this one. */
  readonly remaining: number;
  /** Seconds until the window ends (at least 1 while refused). */
  readonly resetSeconds: number;
}

/**
 * The policy's name in the RateLimit fields: one quota policy per token, so one name. A String
 * item, as draft-ietf-httpapi-ratelimit-headers-10 (section 3) requires.
 */
const POLICY_NAME = '"token"';

/**
 * The IETF RateLimit header fields for a verdict, as draft-ietf-httpapi-ratelimit-headers-10
 * (September 2025) writes them: `RateLimit-Policy: "token";q=600;w=60` (the quota and its
 * window) and `RateLimit: "token";r=12;t=41` (remaining quota, seconds until it is restored).
 * Structured Field lists (RFC 9651); no partition key: the partition is the token that sent it.
 */
export function rateLimitHeaders(verdict: RateLimitVerdict): { 'RateLimit-Policy': string; RateLimit: string } {
  return {
    'RateLimit-Policy': `${POLICY_NAME};q=${verdict.policy.requests};w=${verdict.policy.perSeconds}`,
    RateLimit: `${POLICY_NAME};r=${verdict.remaining};t=${verdict.resetSeconds}`,
  };
}
