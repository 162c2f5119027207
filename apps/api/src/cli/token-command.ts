import { parseArgs } from 'node:util';
import { type Database, openDatabase } from '@plant-store/db';
import { isScope, SCOPES, type Scope } from '@plant-store/schema';
import type { Config } from '../config.js';
import { DEFAULT_TOKEN_SCOPES } from '../middleware/bearer-auth.js';

export const USAGE = `Usage (in a checkout: pnpm run token ...):
  plant-store token create --name NAME [--scope SCOPE ...]   issue a token; prints it alone on the last line
  plant-store token list                                     list tokens (never the tokens themselves)
  plant-store token revoke NAME                              revoke the active token NAME

Scopes: ${SCOPES.join(', ')}. Without --scope a token gets ${DEFAULT_TOKEN_SCOPES.join(' and ')};
repeat --scope to choose, e.g. --scope plants:read --scope webhooks:manage.

Works on the configured database: DATABASE_URL, or the embedded one in DATA_DIR (stop the service first).`;

const TOKEN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export class UsageError extends Error {
  override readonly name = 'UsageError';
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
        options: { name: { type: 'string' }, scope: { type: 'string', multiple: true } },
        strict: true,
      });
      const name = values.name;
      if (name === undefined || !TOKEN_NAME.test(name)) {
        throw new UsageError(
          '--name is required: 1-100 letters, digits, ".", "_" or "-", starting with a letter or digit',
        );
      }
      const scopes = parseScopes(values.scope ?? DEFAULT_TOKEN_SCOPES);
      await withDatabase(config, async (db) => {
        const { token, record } = await db.issueToken({ name, scopes });
        output.out(`Issued token "${record.name}" with scopes ${record.scopes.join(' ')}. It is shown this once only:`);
        output.out(token);
      });
      return;
    }
    case 'list': {
      parseArgs({ args: rest, options: {}, strict: true });
      await withDatabase(config, async (db) => {
        const tokens = await db.listTokens({ includeRevoked: true });
        if (tokens.length === 0) output.out('no tokens');
        for (const token of tokens) {
          const state = token.revokedAt ? `revoked ${token.revokedAt.toISOString()}` : 'active';
          output.out(`${token.name}\t${token.scopes.join(',')}\tcreated ${token.createdAt.toISOString()}\t${state}`);
        }
      });
      return;
    }
    case 'revoke': {
      const { positionals } = parseArgs({ args: rest, options: {}, strict: true, allowPositionals: true });
      const [name, ...extra] = positionals;
      if (name === undefined || extra.length > 0) throw new UsageError('revoke takes exactly one token name');
      await withDatabase(config, async (db) => {
        const record = await db.revokeToken(name);
        output.out(`Revoked token "${record.name}".`);
      });
      return;
    }
    default:
      throw new UsageError(command === undefined ? 'a command is required' : `unknown command "${command}"`);
  }
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
  });
  try {
    await work(db);
  } finally {
    await db.close();
  }
}
