import { DataDirLockedError, TokenNameTakenError, TokenNotFoundError } from '@plant-store/db';
import { ConfigError, loadConfig } from '../config.js';
import { runTokenCommand, USAGE, UsageError } from './token-command.js';

const EXPECTED_ERRORS = [UsageError, ConfigError, DataDirLockedError, TokenNameTakenError, TokenNotFoundError];

/** node:util parseArgs rejects unknown or malformed options with these codes. */
function isArgumentError(error: Error): boolean {
  return 'code' in error && typeof error.code === 'string' && error.code.startsWith('ERR_PARSE_ARGS');
}

try {
  await runTokenCommand(process.argv.slice(2), loadConfig(), { out: (line) => process.stdout.write(`${line}\n`) });
} catch (error) {
  if (!(error instanceof Error)) throw error;
  const usage = error instanceof UsageError || isArgumentError(error);
  if (!usage && !EXPECTED_ERRORS.some((type) => error instanceof type)) throw error;
  process.stderr.write(`token: ${error.message}\n${usage ? `\n${USAGE}\n` : ''}`);
  process.exitCode = 2;
}
