import { describe, expectTypeOf, it } from 'vitest';
import type { Scope } from './contract/scopes.js';
import type { CreatedToken, NewToken, NewTokenInput, Token } from './token.js';

describe('token types', () => {
  it('NewToken is { name; team?; scopes; expiresAt?; rateLimit? }, scopes typed as the known ones', () => {
    expectTypeOf<NewToken>().toEqualTypeOf<{
      name: string;
      team?: string;
      scopes: Scope[];
      expiresAt?: string;
      rateLimit?: { requests: number; perSeconds: number };
    }>();
    expectTypeOf<NewTokenInput['rateLimit']>().toEqualTypeOf<
      { requests: number | bigint; perSeconds: number | bigint } | undefined
    >();
  });

  it('Token has string dates and no secret; CreatedToken adds the token', () => {
    expectTypeOf<Token>().toEqualTypeOf<{
      name: string;
      team: string;
      scopes: string[];
      createdAt: string;
      expiresAt?: string;
      lastUsedAt?: string;
      rateLimit?: { requests: number; perSeconds: number };
    }>();
    expectTypeOf<Omit<CreatedToken, 'token'>>().toEqualTypeOf<Token>();
    expectTypeOf<CreatedToken['token']>().toEqualTypeOf<string>();
  });
});
