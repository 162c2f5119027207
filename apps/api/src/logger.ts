import { pino } from 'pino';

/**
 * Structured logging with pino: one JSON object a line, on stderr (stdout carries only what the
 * service prints for people: the first-run token banner). Call sites log chosen fields only;
 * never a token, an Authorization header or a request body.
 */
export type Logger = pino.Logger;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LoggerOptions {
  /** Default `info`. */
  readonly level?: LogLevel;
  /**
   * Where lines go. Default: stderr through pino's asynchronous destination (lines are
   * buffered while a write is in flight, and flushed synchronously when the process exits).
   * Tests pass a sink: any `{ write(line) }`.
   */
  readonly destination?: pino.DestinationStream;
}

/**
 * The second line of defence: should a call site ever pass one of these, it is censored.
 * Top-level keys and explicit paths only: wildcards would cost on every line.
 */
const REDACTED_PATHS = [
  'authorization',
  'Authorization',
  'token',
  'body',
  'headers.authorization',
  'headers.Authorization',
  'headers.cookie',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.body',
  'request.headers.authorization',
  'request.headers.cookie',
  'request.body',
];

export function createLogger({ level = 'info', destination }: LoggerOptions = {}): Logger {
  return pino(
    {
      level,
      // `message` (not pino's `msg`): what this service always wrote, and what log platforms
      // such as Google Cloud Logging read as the message.
      messageKey: 'message',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: serializeError },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    destination ?? pino.destination({ dest: 2, sync: false }),
  );
}

const MAX_CAUSE_DEPTH = 3;

/**
 * What an error line shows of an error: its type, message, stack, code and causes. Not pino's
 * standard serializer, which copies every enumerable property (a library error may carry the
 * request, with its headers).
 */
export function serializeError(error: unknown, depth = 0): Record<string, unknown> {
  if (!(error instanceof Error)) return { type: typeof error, message: String(error) };
  const code =
    'code' in error && (typeof error.code === 'string' || typeof error.code === 'number') ? error.code : undefined;
  return {
    type: error.name,
    message: error.message,
    stack: error.stack,
    ...(code === undefined ? {} : { code }),
    ...(error.cause !== undefined && depth < MAX_CAUSE_DEPTH ? { cause: serializeError(error.cause, depth + 1) } : {}),
  };
}
