import { DataDirLockedError } from '@plant-store/db';
import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { startServer } from './server.js';

// At `info` until the configuration is read, so that a bad configuration is still reported.
const log = createLogger();

async function main(): Promise<void> {
  const config = loadConfig();
  log.level = config.logLevel;
  const starting = startServer(config, {
    log,
    onDataDirLockLost: (error) => {
      // Another process has taken the data folder: writing on could corrupt it. Stop at once.
      log.fatal(error.message);
      process.exit(1);
    },
  });
  // Installed before the server is up, so a signal during start-up also shuts down cleanly.
  const stop = (signal: string) => {
    log.info({ signal }, 'signal received');
    starting
      .then((server) => server.close())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          log.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await starting;
}

main().catch((error: unknown) => {
  // Configuration and start-up failures: one clear line, no stack trace for the expected ones.
  if (error instanceof ConfigError || error instanceof DataDirLockedError) {
    log.error(error.message);
  } else {
    log.error({ err: error }, 'failed to start');
  }
  process.exit(1);
});
