import type { Config } from '../config.js';
import type { Logger, LogOutput } from '../logger.js';
import { startServer } from '../server.js';

/**
 * `plant-store serve`: runs the service until SIGTERM or SIGINT, then shuts down gracefully
 * (stop accepting, finish the requests in flight, close the database) and exits 0.
 */
export async function runServeCommand(
  config: Config,
  log: Logger,
  logOutput: LogOutput,
  exit: (code: number) => Promise<never>,
): Promise<void> {
  const starting = startServer(config, {
    log,
    logOutput,
    onDataDirLockLost: (error) => {
      // Another process has taken the data folder: writing on could corrupt it. Stop at once.
      log.fatal(error.message);
      void exit(1);
    },
  });
  // Installed before the server is up, so a signal during start-up also shuts down cleanly.
  const stop = (signal: string) => {
    log.info({ signal }, 'signal received');
    starting
      .then((server) => server.close())
      .then(
        () => exit(0),
        (error: unknown) => {
          log.error({ err: error }, 'shutdown failed');
          return exit(1);
        },
      );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await starting;
}
