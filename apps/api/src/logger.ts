/** Minimal structured logging: one JSON object a line on stderr. Never pass tokens or bodies. */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export function createLogger(write: (line: string) => void = (line) => process.stderr.write(line)): Logger {
  const log = (level: string, message: string, fields: Record<string, unknown> = {}) => {
    write(`${JSON.stringify({ time: new Date().toISOString(), level, message, ...fields })}\n`);
  };
  return {
    info: (message, fields) => log('info', message, fields),
    error: (message, fields) => log('error', message, fields),
  };
}

export function describeError(error: unknown): Record<string, unknown> {
  return error instanceof Error
    ? { error: error.name, detail: error.message, stack: error.stack }
    : { error: String(error) };
}
