import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import {
  type AuditActor,
  commandLineActor,
  type Database,
  DataDirLockedError,
  openDatabase,
  type TokenRecord,
} from '@plant-store/db';
import { DEFAULT_TEAM, isScope, NewTokenSchema, SCOPES, type Scope, TeamNameSchema } from '@plant-store/schema';
import * as v from 'valibot';
import type { Config } from '../config.js';
import { DEFAULT_TOKEN_SCOPES } from '../middleware/bearer-auth.js';
import { toIssueOptions } from '../tokens/issue-options.js';

export const USAGE = `Usage (in a checkout: pnpm run token ...; without pnpm: npx --yes pnpm@10.34.9 run token ...):
  plant-store token create --name NAME [--team TEAM] [--scope SCOPE ...] [--expires-at TIME] [--rate-limit N/SECONDS]
                                     issue a token; prints it alone on the last line
  plant-store token list             list every team's tokens (never the tokens themselves)
  plant-store token revoke NAME      revoke the active token NAME, whatever its team

The command line acts as the platform operator: it issues tokens for any team, with any scope,
lifetime and limit, and the audit log records it with your OS user.
--team: the team the token belongs to (default "${DEFAULT_TEAM}"); it sees and manages that team's tokens
and webhooks only, unless it has platform:admin.
Scopes: ${SCOPES.join(', ')}. Without --scope a token gets ${DEFAULT_TOKEN_SCOPES.join(' and ')};
repeat --scope to choose, e.g. --scope plants:read --scope webhooks:manage. A token with
tokens:manage issues, lists and revokes its team's tokens over HTTP (POST /tokens, GET /tokens, DELETE /tokens/NAME).
--expires-at: an RFC 3339 time in the future (2031-01-01T00:00:00Z); without it, the token never expires.
--rate-limit: its own limit, e.g. 600/60 for 600 requests a minute; without it, TOKEN_RATE_LIMIT applies.

Works on the configured database: DATABASE_URL (the service may keep running), or the embedded one in
DATA_DIR, which only one process can open: stop the service first.`;

const RATE_LIMIT = /^(\d{1,15})\/(\d{1,15})$/;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * The embedded database is open in another process, the running service most likely: PGlite
 * serves one process at a time. Says what to do instead, in one line.
 */
export class EmbeddedDatabaseInUseError extends Error {
  override readonly name = 'EmbeddedDatabaseInUseError';
  constructor(readonly dataDir: string) {
    super(
      `the embedded database in ${dataDir} is open in a running Plant Store service (one process at a time): ` +
        'stop the service (Ctrl+C where it runs), run this command again, then start the service again; ' +
        'or, while it runs, manage tokens over HTTP with a tokens:manage token (POST /tokens, GET /tokens, ' +
        'DELETE /tokens/NAME: see docs/tokens.md)',
    );
  }
}

export interface Output {
  out(line: string): void;
}

export async function runTokenCommand(argv: readonly string[], config: Config, output: Output): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'create': {
      const { values } = parseArgs({
        args: rest,
        options: {
          name: { type: 'string' },
          team: { type: 'string' },
          scope: { type: 'string', multiple: true },
          'expires-at': { type: 'string' },
          'rate-limit': { type: 'string' },
        },
        strict: true,
      });
      if (values.name === undefined) {
        throw new UsageError(
          '--name is required: 1-100 letters, digits, ".", "_" or "-", starting with a letter or digit',
        );
      }
      // The same rules as POST /tokens: the contract's schema, then the clock.
      const checked = v.safeParse(
        NewTokenSchema,
        {
          name: values.name,
          scopes: parseScopes(values.scope ?? DEFAULT_TOKEN_SCOPES),
          ...(values['expires-at'] === undefined ? {} : { expiresAt: values['expires-at'] }),
          ...(values['rate-limit'] === undefined ? {} : { rateLimit: parseRateLimit(values['rate-limit']) }),
        },
        { abortEarly: true },
      );
      if (!checked.success) throw new UsageError(checked.issues[0].message);
      const options = toIssueOptions(checked.output, Date.now());
      if ('refusal' in options) throw new UsageError(options.refusal);
      const team = parseTeam(values.team ?? DEFAULT_TEAM);
      await withDatabase(config, async (db) => {
        const { token, record } = await db.issueToken({ ...options, team, actor: osUserActor() });
        output.out(`Issued token ${describeToken(record)}. It is shown this once only:`);
        output.out(token);
      });
      return;
    }
    case 'list': {
      parseArgs({ args: rest, options: {}, strict: true });
      await withDatabase(config, async (db) => {
        const tokens = await db.listTokens({ includeRevoked: true });
        if (tokens.length === 0) output.out('no tokens');
        const now = Date.now();
        for (const token of tokens) {
          const state = token.revokedAt
            ? `revoked ${token.revokedAt.toISOString()}`
            : token.expiresAt !== null && token.expiresAt.getTime() <= now
              ? 'expired'
              : 'active';
          output.out(
            [
              token.name,
              `team ${token.team}`,
              token.scopes.join(','),
              `created ${token.createdAt.toISOString()}`,
              `expires ${token.expiresAt?.toISOString() ?? 'never'}`,
              `last used ${token.lastUsedAt?.toISOString() ?? 'never'}`,
              `limit ${token.rateLimit === null ? 'default' : `${token.rateLimit.requests}/${token.rateLimit.perSeconds}s`}`,
              state,
            ].join('\t'),
          );
        }
      });
      return;
    }
    case 'revoke': {
      const { positionals } = parseArgs({ args: rest, options: {}, strict: true, allowPositionals: true });
      const [name, ...extra] = positionals;
      if (name === undefined || extra.length > 0) throw new UsageError('revoke takes exactly one token name');
      await withDatabase(config, async (db) => {
        const record = await db.revokeToken(name, { actor: osUserActor() });
        output.out(`Revoked token "${record.name}".`);
      });
      return;
    }
    default:
      throw new UsageError(command === undefined ? 'a command is required' : `unknown command "${command}"`);
  }
}

/** `"ci-bot" of team "default" with scopes plants:read plants:write`, and its expiry and limit when it has them. */
function describeToken(record: TokenRecord): string {
  return [
    `"${record.name}" of team "${record.team}" with scopes ${record.scopes.join(' ')}`,
    ...(record.expiresAt === null ? [] : [`, expiring ${record.expiresAt.toISOString()}`]),
    ...(record.rateLimit === null
      ? []
      : [`, limited to ${record.rateLimit.requests} requests per ${record.rateLimit.perSeconds} s`]),
  ].join('');
}

/** `--rate-limit 600/60`: the numbers, for the schema to judge their range. */
function parseRateLimit(text: string): { requests: number; perSeconds: number } {
  const match = RATE_LIMIT.exec(text);
  if (!match) throw new UsageError('--rate-limit must be REQUESTS/SECONDS, e.g. 600/60');
  return { requests: Number(match[1]), perSeconds: Number(match[2]) };
}

/** `--team`, by the rules of token names. */
function parseTeam(text: string): string {
  const checked = v.safeParse(TeamNameSchema, text);
  if (!checked.success) throw new UsageError(`--team: ${checked.issues[0].message}`);
  return checked.output;
}

/** The command line, as the audit log names it: the OS user running it. */
function osUserActor(): AuditActor {
  let user: string | undefined;
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry for this uid (some containers): the environment's word, or the uid.
    user = process.env.USER ?? process.env.LOGNAME ?? `uid ${process.getuid?.() ?? 'unknown'}`;
  }
  return commandLineActor(user);
}

/** The scopes named, each once, in the order first given. */
function parseScopes(values: readonly string[]): Scope[] {
  const scopes = values.map((value) => {
    if (!isScope(value)) throw new UsageError(`unknown scope "${value}"; scopes are ${SCOPES.join(', ')}`);
    return value;
  });
  return [...new Set(scopes)];
}

async function withDatabase(config: Config, work: (db: Database) => Promise<void>): Promise<void> {
  // Fail at once if the service holds the embedded folder, rather than wait for its lock.
  const db = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: 1,
    lockWaitMs: 0,
    migrate: config.migrateOnStart,
  }).catch((error: unknown) => {
    throw error instanceof DataDirLockedError ? new EmbeddedDatabaseInUseError(error.dataDir) : error;
  });
  try {
    await work(db);
  } finally {
    await db.close();
  }
}
