import type { Config } from '../config.js';
import type { Logger, LogOutput } from '../logger.js';
import { startServer } from '../server.js';

/** How long past SHUTDOWN_TIMEOUT_MS a shutdown may take before the process exits regardless. */
export const SHUTDOWN_BACKSTOP_MS = 5_000;

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
    // The backstop: whatever holds the shutdown up (a database that never answers its close),
    // the process is gone a few seconds after the drain timeout.
    setTimeout(() => {
      log.error({ timeoutMs: config.shutdownTimeoutMs + SHUTDOWN_BACKSTOP_MS }, 'shutdown did not finish: exiting');
      void exit(1);
    }, config.shutdownTimeoutMs + SHUTDOWN_BACKSTOP_MS).unref();
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
