import { createLogger, type Logger, type LogLevel } from '../logger.js';

/** A logger whose lines are kept, parsed, in `lines` (at `level` and above; default debug). */
export function logSink(level: LogLevel = 'debug'): {
  readonly log: Logger;
  readonly lines: Array<Record<string, unknown>>;
} {
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger({ level, destination: { write: (line) => lines.push(JSON.parse(line)) } });
  return { log, lines };
}
