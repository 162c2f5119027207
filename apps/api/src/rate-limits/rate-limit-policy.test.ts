import { describe, expect, it } from 'vitest';
import { parseRateLimitPolicy, rateLimitHeaders } from './rate-limit-policy.js';

const MAX = { requests: 1_000_000, perSeconds: 86_400 };

describe('parseRateLimitPolicy', () => {
  it('reads REQUESTS/SECONDS within the bounds', () => {
    expect(parseRateLimitPolicy('600/60', MAX)).toEqual({ requests: 600, perSeconds: 60 });
    expect(parseRateLimitPolicy('1000000/86400', MAX)).toEqual({ requests: 1_000_000, perSeconds: 86_400 });
  });

  it.each(['', '600', '600/', '/60', '0/60', '600/0', '-1/60', '1.5/60', '600/60s', ' 600/60', '1000001/1', '1/86401'])(
    'refuses %j',
    (text) => {
      expect(() => parseRateLimitPolicy(text, MAX)).toThrow('must be REQUESTS/SECONDS');
    },
  );
});

describe('rateLimitHeaders', () => {
  it('writes the draft-10 RateLimit-Policy and RateLimit fields: a String item with q/w and r/t', () => {
    const policy = { requests: 600, perSeconds: 60 };
    expect(rateLimitHeaders({ allowed: true, policy, remaining: 599, resetSeconds: 60 })).toEqual({
      'RateLimit-Policy': '"token";q=600;w=60',
      RateLimit: '"token";r=599;t=60',
    });
    expect(rateLimitHeaders({ allowed: false, policy, remaining: 0, resetSeconds: 17 })).toEqual({
      'RateLimit-Policy': '"token";q=600;w=60',
      RateLimit: '"token";r=0;t=17',
    });
  });
});
