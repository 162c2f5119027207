import * as v from 'valibot';
import { SCOPES } from './contract/scopes.js';
import { int32Schema } from './int64.js';
import { objectMessage } from './text.js';
import { timestampSchema } from './timestamp.js';

/** A token's name: 1-100 letters, digits, `.`, `_` or `-`, starting with a letter or digit. */
export const TOKEN_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$';
export const TOKEN_NAME_MAX_LENGTH = 100;
/** The most requests a token's own rate limit may allow per window. */
export const TOKEN_RATE_LIMIT_MAX_REQUESTS = 1_000_000;
/** The longest window of a token's own rate limit: a day. */
export const TOKEN_RATE_LIMIT_MAX_SECONDS = 86_400;

const TOKEN_NAME = new RegExp(TOKEN_NAME_PATTERN);
const NAME_MESSAGE = 'name must be 1-100 letters, digits, ".", "_" or "-", starting with a letter or digit';
const TEAM_MESSAGE = 'team must be 1-100 letters, digits, ".", "_" or "-", starting with a letter or digit';
/** The team of every token and subscription made before teams existed, and the command line's default. */
export const DEFAULT_TEAM = 'default';
const SCOPES_MESSAGE = `scopes must be an array of scope names: ${SCOPES.join(', ')}`;
const SCOPE_MESSAGE = `each scope must be one of ${SCOPES.join(', ')}`;
const TOKEN_MESSAGE = 'token must be pst_ followed by 43 base64url characters';
const TOKEN_PATTERN = '^pst_[A-Za-z0-9_-]{43}$';
const TOKEN = new RegExp(TOKEN_PATTERN);

/** A token's name: how it is listed, revoked (`DELETE /tokens/{name}`) and shown in logs and metrics. */
export const TokenNameSchema = v.pipe(
  v.string((issue) => (issue.input === undefined ? 'name is required' : NAME_MESSAGE)),
  v.description(
    'The name of the token: 1-100 letters, digits, ".", "_" or "-", starting with a letter or digit; unique, ignoring case, among every token ever issued (a revoked name is not reused)',
  ),
  v.metadata({ minLength: 1, maxLength: TOKEN_NAME_MAX_LENGTH, pattern: TOKEN_NAME_PATTERN }),
  v.check((text) => TOKEN_NAME.test(text), NAME_MESSAGE),
);

/**
 * A team's name: the same rules as a token's name. Every token belongs to one, and sees and
 * manages that team's tokens and subscriptions only (unless it holds platform:admin).
 */
export const TeamNameSchema = v.pipe(
  v.string((issue) => (issue.input === undefined ? 'team is required' : TEAM_MESSAGE)),
  v.description('The team: 1-100 letters, digits, ".", "_" or "-", starting with a letter or digit'),
  v.metadata({ minLength: 1, maxLength: TOKEN_NAME_MAX_LENGTH, pattern: TOKEN_NAME_PATTERN }),
  v.check((text) => TOKEN_NAME.test(text), TEAM_MESSAGE),
);

/** The scopes a new token carries: at least one, each known, none twice. */
export const TokenScopesSchema = v.pipe(
  v.array(v.picklist(SCOPES, SCOPE_MESSAGE), (issue) =>
    issue.input === undefined ? 'scopes is required' : SCOPES_MESSAGE,
  ),
  v.description(`What the token may do: one or more of ${SCOPES.join(', ')}, each at most once`),
  v.metadata({ uniqueItems: true }),
  v.minLength(1, 'scopes must name at least one scope'),
  v.check((scopes) => new Set(scopes).size === scopes.length, 'scopes must not name a scope twice'),
);

/** A token's own rate limit: at most `requests` requests in each window of `perSeconds` seconds. */
export const TokenRateLimitSchema = v.object(
  {
    requests: int32Schema('rateLimit.requests', 'Requests allowed in each window', 1, TOKEN_RATE_LIMIT_MAX_REQUESTS),
    perSeconds: int32Schema(
      'rateLimit.perSeconds',
      'The length of the window, in seconds',
      1,
      TOKEN_RATE_LIMIT_MAX_SECONDS,
    ),
  },
  (issue) => {
    const pathItem = issue.path?.[0];
    if (pathItem?.origin === 'key') return `rateLimit.${String(pathItem.key)} is required`;
    return 'rateLimit must be an object { requests, perSeconds }';
  },
);
export type TokenRateLimit = v.InferOutput<typeof TokenRateLimitSchema>;

const rateLimitEntry = {
  rateLimit: v.exactOptional(
    v.pipe(
      TokenRateLimitSchema,
      v.description("The token's own rate limit; absent: the service's default limit applies"),
    ),
  ),
};

/**
 * The body of `POST /tokens`: `{ name, team?, scopes, expiresAt?, rateLimit? }`. Unknown keys are
 * stripped. Whether `expiresAt` lies in the future is the service's check (it has the clock).
 */
export const NewTokenSchema = v.object(
  {
    name: TokenNameSchema,
    team: v.exactOptional(
      v.pipe(
        TeamNameSchema,
        v.description(
          "The team it belongs to; absent: the issuing token's team. Only a token with platform:admin may name another team",
        ),
      ),
    ),
    scopes: TokenScopesSchema,
    expiresAt: v.exactOptional(
      timestampSchema(
        'expiresAt',
        'When the token stops authenticating (RFC 3339, in the future); absent: it never expires',
      ),
    ),
    ...rateLimitEntry,
  },
  objectMessage,
);
export type NewToken = v.InferOutput<typeof NewTokenSchema>;
/** What a caller may pass: `rateLimit` numbers as numbers or bigints. */
export type NewTokenInput = v.InferInput<typeof NewTokenSchema>;

/**
 * A token as listed: never the token itself. `scopes` are read back as any strings (not
 * re-judged), so that a listing stays readable when scopes are added.
 */
export const TokenSchema = v.object(
  {
    name: TokenNameSchema,
    team: v.pipe(TeamNameSchema, v.description('The team it belongs to')),
    scopes: v.pipe(
      v.array(v.string('each scope must be a string'), 'scopes must be an array'),
      v.description('What the token may do'),
    ),
    createdAt: timestampSchema('createdAt', 'When the token was issued (RFC 3339)'),
    expiresAt: v.exactOptional(
      timestampSchema('expiresAt', 'When the token stops (or stopped) authenticating (RFC 3339); absent: never'),
    ),
    lastUsedAt: v.exactOptional(
      timestampSchema(
        'lastUsedAt',
        'When the token last authenticated a request (RFC 3339), recorded in batches: up to about a minute behind; absent: not used yet',
      ),
    ),
    ...rateLimitEntry,
  },
  objectMessage,
);
export type Token = v.InferOutput<typeof TokenSchema>;

/** The answer of `POST /tokens`: the token's record and the bearer token itself, shown this once only. */
export const CreatedTokenSchema = v.object(
  {
    ...TokenSchema.entries,
    token: v.pipe(
      v.string(TOKEN_MESSAGE),
      v.description(
        'The bearer token: send it as `Authorization: Bearer <token>`. Shown this once only; the service keeps only its hash.',
      ),
      v.metadata({ pattern: TOKEN_PATTERN }),
      v.check((text) => TOKEN.test(text), TOKEN_MESSAGE),
    ),
  },
  objectMessage,
);
export type CreatedToken = v.InferOutput<typeof CreatedTokenSchema>;

/** The body of a `GET /tokens` answer: every active token (expired ones included), oldest first. */
export const TokenListSchema = v.array(TokenSchema);
export type TokenList = v.InferOutput<typeof TokenListSchema>;
