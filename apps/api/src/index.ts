#!/usr/bin/env node
/**
 * The service's one entrypoint, the same inside and outside the image:
 * `plant-store [serve | migrate | token ...]` (see USAGE).
 */
import { DataDirLockedError, MigrationsPendingError, TokenNameTakenError, TokenNotFoundError } from '@plant-store/db';
import { runMigrateCommand } from './cli/migrate-command.js';
import { runServeCommand } from './cli/serve-command.js';
import { runTokenCommand, USAGE as TOKEN_USAGE, UsageError } from './cli/token-command.js';
import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './logger.js';

export const USAGE = `Usage: plant-store [command]   (in a checkout: pnpm start, pnpm run token ..., pnpm db:migrate)

  serve                      run the service (the default)
  migrate                    apply pending database migrations, then exit
  token create|list|revoke   manage bearer tokens; plant-store token --help for more

Configuration comes from the environment: see the README's Configuration table.`;

/** Failures a person can act on: one line, no stack trace. */
const EXPECTED_ERRORS = [
  UsageError,
  ConfigError,
  DataDirLockedError,
  MigrationsPendingError,
  TokenNameTakenError,
  TokenNotFoundError,
];

// At `info` until the configuration is read, so that a bad configuration is still reported.
const log = createLogger();

async function main(argv: readonly string[]): Promise<void> {
  const [command = 'serve', ...rest] = argv;
  switch (command) {
    case 'serve': {
      if (rest.length > 0) throw new UsageError(`serve takes no arguments, not ${rest.join(' ')}`);
      const config = loadConfig();
      log.level = config.logLevel;
      return runServeCommand(config, log);
    }
    case 'migrate': {
      if (rest.length > 0) throw new UsageError(`migrate takes no arguments, not ${rest.join(' ')}`);
      const config = loadConfig();
      log.level = config.logLevel;
      return runMigrateCommand(config, log);
    }
    case 'token':
      if (rest.includes('--help') || rest.includes('-h')) {
        process.stdout.write(`${TOKEN_USAGE}\n`);
        return;
      }
      // Its output is for people and scripts: the token alone on the last stdout line.
      return runTokenCommand(rest, loadConfig(), { out: (line) => process.stdout.write(`${line}\n`) });
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return;
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

/** node:util parseArgs rejects unknown or malformed options with these codes. */
function isArgumentError(error: unknown): error is Error {
  return error instanceof Error && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS');
}

const command = process.argv[2];
main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || isArgumentError(error)) {
    process.stderr.write(`plant-store: ${error.message}\n\n${command === 'token' ? TOKEN_USAGE : USAGE}\n`);
    process.exit(2);
  }
  const expected = EXPECTED_ERRORS.some((type) => error instanceof type);
  if (command === 'token') {
    // A command for people and scripts: a plain line, and 2 for what the caller can fix.
    if (!expected) throw error;
    process.stderr.write(`plant-store token: ${(error as Error).message}\n`);
    process.exit(2);
  }
  // The service's own failures to start go to the log, like everything else it says.
  if (error instanceof MigrationsPendingError) {
    log.error(`${error.message}; apply them with \`plant-store migrate\`, or start with MIGRATE_ON_START=true`);
  } else if (expected) {
    log.error((error as Error).message);
  } else {
    log.error({ err: error }, 'failed to start');
  }
  process.exit(1);
});
