import { ErrorCode } from '@plant-store/schema';
import type { Middleware } from 'koa';
import { ApiError } from '../http/api-error.js';
import type { AppState } from '../http/app-state.js';
import { type RateLimitPolicy, rateLimitHeaders } from '../rate-limits/rate-limit-policy.js';
import type { TokenRateLimiter } from '../rate-limits/token-rate-limiter.js';

export interface TokenRateLimits {
  readonly limiter: Pick<TokenRateLimiter, 'consume'>;
  /** The limit of a token without one of its own; null: such tokens are not limited. */
  readonly defaultPolicy: RateLimitPolicy | null;
}

export function overLimitMessage(policy: RateLimitPolicy, retryAfterSeconds: number): string {
  return `too many requests: this token may send ${policy.requests} requests per ${policy.perSeconds} s; retry after ${retryAfterSeconds} s`;
}

/**
 * Right after bearerAuth: counts the request against its token's limit (its own, else the
 * default). Every counted answer carries the RateLimit-Policy and RateLimit fields; one over the
 * limit is a 429 in the Error shape with Retry-After, before the body is read.
 */
export function limitTokenRate({ limiter, defaultPolicy }: TokenRateLimits): Middleware<AppState> {
  return async (ctx, next) => {
    const token = ctx.state.token;
    const policy = token?.rateLimit ?? defaultPolicy;
    if (token === undefined || policy === null) return next();
    const verdict = await limiter.consume(token.id, policy);
    const headers = rateLimitHeaders(verdict);
    if (!verdict.allowed) {
      const retryAfter = String(verdict.resetSeconds);
      throw new ApiError(ErrorCode.TooManyRequests, overLimitMessage(policy, verdict.resetSeconds), {
        headers: { ...headers, 'Retry-After': retryAfter },
      });
    }
    ctx.res.setHeader('RateLimit-Policy', headers['RateLimit-Policy']);
    ctx.res.setHeader('RateLimit', headers.RateLimit);
    await next();
  };
}
