import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { parseJson } from './json.js';
import {
  CreatedTokenSchema,
  NewTokenSchema,
  TOKEN_RATE_LIMIT_MAX_REQUESTS,
  TOKEN_RATE_LIMIT_MAX_SECONDS,
  TokenListSchema,
  TokenNameSchema,
} from './token.js';

const NAME_MESSAGE = 'name must be 1-100 letters, digits, ".", "_" or "-", starting with a letter or digit';
const SCOPE_MESSAGE =
  'each scope must be one of plants:read, plants:write, webhooks:manage, tokens:manage, platform:admin';
const TOKEN = `pst_${'A'.repeat(20)}_-${'z'.repeat(21)}`;

/** The first refusal, as the service reports it (it parses with abortEarly). */
function firstMessage(schema: v.GenericSchema, input: unknown): string | undefined {
  const result = v.safeParse(schema, input, { abortEarly: true });
  return result.success ? undefined : result.issues[0].message;
}

describe('TokenNameSchema', () => {
  it.each(['a', 'ci-bot', 'team.billing_2', `A${'b'.repeat(99)}`])('accepts %j', (name) => {
    expect(v.parse(TokenNameSchema, name)).toBe(name);
  });

  it.each(['', '-leading-dash', '.hidden', 'has space', 'slash/inside', 'ünïcode', `A${'b'.repeat(100)}`, 'nul\u0000'])(
    'refuses %j',
    (name) => {
      expect(firstMessage(TokenNameSchema, name)).toBe(NAME_MESSAGE);
    },
  );
});

describe('NewTokenSchema', () => {
  it('reads the exact-codec body: integers as bigint become numbers, unknown keys are stripped', () => {
    const body = parseJson(
      '{"name":"ci","scopes":["plants:read"],"expiresAt":"2030-01-01T00:00:00Z","rateLimit":{"requests":100,"perSeconds":60},"token":"mine"}',
    );
    expect(v.parse(NewTokenSchema, body)).toStrictEqual({
      name: 'ci',
      scopes: ['plants:read'],
      expiresAt: '2030-01-01T00:00:00Z',
      rateLimit: { requests: 100, perSeconds: 60 },
    });
    expect(v.parse(NewTokenSchema, { name: 'ci', scopes: ['tokens:manage'] })).toStrictEqual({
      name: 'ci',
      scopes: ['tokens:manage'],
    });
  });

  it.each([
    [{}, 'name is required'],
    [{ name: 'ci' }, 'scopes is required'],
    [
      { name: 'ci', scopes: 'plants:read' },
      'scopes must be an array of scope names: plants:read, plants:write, webhooks:manage, tokens:manage, platform:admin',
    ],
    [{ name: 'ci', scopes: [] }, 'scopes must name at least one scope'],
    [{ name: 'ci', scopes: ['plants:*'] }, SCOPE_MESSAGE],
    [{ name: 'ci', scopes: ['toString'] }, SCOPE_MESSAGE],
    [{ name: 'ci', scopes: ['plants:read', 'plants:read'] }, 'scopes must not name a scope twice'],
    [
      { name: 'ci', scopes: ['plants:read'], expiresAt: '2030-02-30T00:00:00Z' },
      'expiresAt must be an RFC 3339 date-time string',
    ],
    [
      { name: 'ci', scopes: ['plants:read'], expiresAt: 1_900_000_000 },
      'expiresAt must be an RFC 3339 date-time string',
    ],
    [{ name: 'ci', scopes: ['plants:read'], expiresAt: null }, 'expiresAt must be an RFC 3339 date-time string'],
    [{ name: 'ci', scopes: ['plants:read'], rateLimit: 100 }, 'rateLimit must be an object { requests, perSeconds }'],
    [{ name: 'ci', scopes: ['plants:read'], rateLimit: { requests: 100 } }, 'rateLimit.perSeconds is required'],
    [
      { name: 'ci', scopes: ['plants:read'], rateLimit: { requests: 0, perSeconds: 1 } },
      `rateLimit.requests must be an integer between 1 and ${TOKEN_RATE_LIMIT_MAX_REQUESTS}`,
    ],
    [
      { name: 'ci', scopes: ['plants:read'], rateLimit: { requests: 1.5, perSeconds: 1 } },
      `rateLimit.requests must be an integer between 1 and ${TOKEN_RATE_LIMIT_MAX_REQUESTS}`,
    ],
    [
      { name: 'ci', scopes: ['plants:read'], rateLimit: { requests: 10, perSeconds: 86_401n } },
      `rateLimit.perSeconds must be an integer between 1 and ${TOKEN_RATE_LIMIT_MAX_SECONDS}`,
    ],
    [
      { name: 'ci', scopes: ['plants:read'], rateLimit: { requests: 10n ** 30n, perSeconds: 1 } },
      `rateLimit.requests must be an integer between 1 and ${TOKEN_RATE_LIMIT_MAX_REQUESTS}`,
    ],
  ])('refuses %s', (input, message) => {
    expect(firstMessage(NewTokenSchema, input)).toBe(message);
  });
});

describe('TokenListSchema and CreatedTokenSchema', () => {
  it('read listings with optional dates and limits, scopes as any strings', () => {
    const listed = [
      { name: 'a', team: 'default', scopes: ['plants:read', 'future:scope'], createdAt: '2026-11-23T10:48:07.123Z' },
      {
        name: 'b',
        team: 'inventory',
        scopes: ['tokens:manage'],
        createdAt: '2026-11-23T10:48:07.123Z',
        expiresAt: '2027-01-01T00:00:00.000Z',
        lastUsedAt: '2026-11-24T00:00:00.000Z',
        rateLimit: { requests: 5, perSeconds: 1 },
      },
    ];
    expect(v.parse(TokenListSchema, listed)).toStrictEqual(listed);
  });

  it('requires the token in a created answer, in its exact form', () => {
    const record = { name: 'a', team: 'default', scopes: ['plants:read'], createdAt: '2026-11-23T10:48:07.123Z' };
    expect(v.parse(CreatedTokenSchema, { ...record, token: TOKEN })).toStrictEqual({ ...record, token: TOKEN });
    expect(firstMessage(CreatedTokenSchema, record)).toBe('token is required');
    expect(firstMessage(CreatedTokenSchema, { ...record, token: 'pst_short' })).toBe(
      'token must be pst_ followed by 43 base64url characters',
    );
  });
});
