#!/usr/bin/env -S node --max-semi-space-size=16 --max-old-space-size=192
/**
 * The service's one entrypoint, the same inside and outside the image:
 * `plant-store [serve | migrate | token ...]` (see USAGE). Run it as a program (`dist/index.js`,
 * the `plant-store` bin, the image's entrypoint), not as `node dist/index.js`: the first line
 * carries the runtime flags the service is measured with. `--max-semi-space-size=16` keeps V8's
 * young generation at the 16 MB per semi-space Node 20 used: Node 24 sizes it by the machine's
 * memory, up to 64 MB, which under load cost 50 to 100 MB of RSS for no throughput (measured with
 * pnpm bench; the RSS budget is 250 MB).
 */
import { isPlantStoreError } from '@plant-store/client';
import { DataDirLockedError, MigrationsPendingError, TokenNameTakenError, TokenNotFoundError } from '@plant-store/db';
import { runMigrateCommand } from './cli/migrate-command.js';
import { USAGE as PLANTS_USAGE, runPlantsCommand } from './cli/plants-command.js';
import { runServeCommand } from './cli/serve-command.js';
import { EmbeddedDatabaseInUseError, runTokenCommand, USAGE as TOKEN_USAGE, UsageError } from './cli/token-command.js';
import { ConfigError, loadConfig } from './config.js';
import { PortUnavailableError } from './http/port-unavailable-error.js';
import { createLogger, createLogOutput } from './logger.js';

export const USAGE = `Usage: plant-store [command]   (in a checkout: pnpm start, pnpm run token ..., pnpm db:migrate)

  serve                      run the service (the default)
  migrate                    apply pending database migrations, then exit
  token create|list|revoke   manage bearer tokens; plant-store token --help for more
  plants import|export FILE  move plants in or out through the HTTP API; plant-store plants --help for more

Configuration comes from the environment: see docs/configuration.md.`;

/** Failures a person can act on: one line, no stack trace. */
const EXPECTED_ERRORS = [
  UsageError,
  ConfigError,
  DataDirLockedError,
  EmbeddedDatabaseInUseError,
  MigrationsPendingError,
  PortUnavailableError,
  TokenNameTakenError,
  TokenNotFoundError,
];

// At `info` until the configuration is read, so that a bad configuration is still reported.
const logOutput = createLogOutput();
const log = createLogger({ destination: logOutput });

/** How long an exit waits for the log's last lines: a blocked log pipe must not hold it. */
const LOG_FLUSH_AT_EXIT_MS = 1_000;

/** Exits once the log's buffered lines are written, or after LOG_FLUSH_AT_EXIT_MS. */
async function exit(code: number): Promise<never> {
  await logOutput.flush(LOG_FLUSH_AT_EXIT_MS);
  process.exit(code);
}

async function main(argv: readonly string[]): Promise<void> {
  const [command = 'serve', ...rest] = argv;
  switch (command) {
    case 'serve': {
      if (rest.length > 0) throw new UsageError(`serve takes no arguments, not ${rest.join(' ')}`);
      const config = loadConfig();
      log.level = config.logLevel;
      return runServeCommand(config, log, logOutput, exit);
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
    case 'plants':
      if (rest.includes('--help') || rest.includes('-h')) {
        process.stdout.write(`${PLANTS_USAGE}\n`);
        return;
      }
      // A client of the service (over HTTP): no configuration of the service's own is read.
      return runPlantsCommand(rest, {
        env: process.env,
        out: (line) => process.stdout.write(`${line}\n`),
        progress: process.stderr,
        stdout: process.stdout,
      });
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
main(process.argv.slice(2)).then(
  // serve runs until a signal; migrate and token end here, their lines written.
  () => (command === undefined || command === 'serve' ? undefined : logOutput.flush(LOG_FLUSH_AT_EXIT_MS)),
  (error: unknown) => {
    if (error instanceof UsageError || isArgumentError(error)) {
      const usage = command === 'token' ? TOKEN_USAGE : command === 'plants' ? PLANTS_USAGE : USAGE;
      process.stderr.write(`plant-store: ${error.message}\n\n${usage}\n`);
      return exit(2);
    }
    const expected = EXPECTED_ERRORS.some((type) => error instanceof type);
    if (command === 'token') {
      // A command for people and scripts: a plain line, and 2 for what the caller can fix.
      if (!expected) throw error;
      process.stderr.write(`plant-store token: ${(error as Error).message}\n`);
      return exit(2);
    }
    if (command === 'plants') {
      // The service's answer (a 400 naming the line, a 403) or why it could not be reached: one line.
      process.stderr.write(`plant-store plants: ${error instanceof Error ? error.message : String(error)}\n`);
      return exit(isPlantStoreError(error) && error.kind === 'error-response' ? 2 : 1);
    }
    // The service's own failures to start go to the log, like everything else it says.
    if (error instanceof MigrationsPendingError) {
      log.error(`${error.message}; apply them with \`plant-store migrate\`, or start with MIGRATE_ON_START=true`);
    } else if (expected) {
      log.error((error as Error).message);
    } else {
      log.error({ err: error }, 'failed to start');
    }
    return exit(1);
  },
);
