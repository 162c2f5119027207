import { pino } from 'pino';
import sonicBoom from 'sonic-boom';

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
  /** Where lines go. Default: a new createLogOutput() on stderr. Tests pass a sink: any `{ write(line) }`. */
  readonly destination?: pino.DestinationStream;
}

/** Where the service's lines go: stderr, batched and bounded (see createLogOutput). */
export interface LogOutput extends pino.DestinationStream {
  /** Lines dropped so far because the destination did not keep up, or failed. */
  droppedLines(): number;
  /** Writes what is buffered; resolves once written, or after `timeoutMs` whatever happened. */
  flush(timeoutMs: number): Promise<void>;
}

/**
 * Lines wait until this many bytes are buffered (about 30 access lines), or LOG_FLUSH_INTERVAL_MS:
 * one write per line cost the service about 40 us of CPU per request (the write's round trip
 * through libuv's thread pool), a third of what a read costs.
 */
const LOG_BATCH_BYTES = 4096;
const LOG_FLUSH_INTERVAL_MS = 200;
const LOG_MAX_WRITE_BYTES = 256 * 1024;
/**
 * At most this much waits to be written; beyond it, lines are dropped and counted. A log pipe
 * nobody reads must not take the process's memory with it.
 */
const LOG_BUFFER_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Stderr as pino's destination: asynchronous, batched (LOG_BATCH_BYTES, or every
 * LOG_FLUSH_INTERVAL_MS), and bounded (LOG_BUFFER_MAX_BYTES: what does not fit is dropped and
 * counted, never held). After a write error (EPIPE: the reader went away) lines are dropped and
 * counted too. Nothing flushes synchronously at exit, where a blocked pipe would hold the process
 * for ever: the caller flushes with a deadline (flush(timeoutMs)) before it exits.
 *
 * Lines are batched here, not in sonic-boom: its write() measures the UTF-8 length of the whole
 * chunk it appends to, on every call, which for one access line at a time cost about 2.5 us of
 * CPU per line (a sixth of the 400 path's). Handed a batch at a time, it measures once a batch.
 */
export function createLogOutput(fd = 2): LogOutput {
  // sonic-boom is CommonJS: its class is a property of what an ES import gets.
  const stream = new sonicBoom.SonicBoom({
    fd,
    sync: false,
    maxLength: LOG_BUFFER_MAX_BYTES,
    // Up to this much in one write(2), instead of its 16 KB: a backlog drains in few writes.
    maxWrite: LOG_MAX_WRITE_BYTES,
  });
  let dropped = 0;
  let broken = false;
  // Lines not yet handed to the stream, and their length in UTF-16 code units (at most their bytes).
  let pending: string[] = [];
  let pendingLength = 0;
  // Bytes handed to the stream, and bytes it wrote or dropped: what flush waits for.
  let accepted = 0;
  let settled = 0;
  // flush() callers, resolved once every byte handed over is written or dropped.
  let waiters: (() => void)[] = [];
  const settle = () => {
    if (waiters.length === 0 || (!broken && settled < accepted)) return;
    const resolved = waiters;
    waiters = [];
    for (const resolve of resolved) resolve();
  };
  stream.on('write', (bytes: number) => {
    settled += bytes;
    settle();
  });
  stream.on('drop', (data: string | Buffer) => {
    dropped += countLines(data);
    settled += Buffer.byteLength(data);
    settle();
  });
  stream.on('error', () => {
    broken = true;
    settle();
  });
  const handOver = () => {
    if (pending.length === 0) return;
    const batch = pending.length === 1 ? (pending[0] as string) : pending.join('');
    pending = [];
    pendingLength = 0;
    if (broken) {
      dropped += countLines(batch);
      return;
    }
    accepted += Buffer.byteLength(batch);
    stream.write(batch);
  };
  const timer = setInterval(handOver, LOG_FLUSH_INTERVAL_MS);
  timer.unref();
  return {
    write(line: string) {
      if (broken) {
        dropped += 1;
        return;
      }
      pending.push(line);
      pendingLength += line.length;
      if (pendingLength >= LOG_BATCH_BYTES) handOver();
    },
    droppedLines: () => dropped,
    flush(timeoutMs) {
      handOver();
      return new Promise((resolve) => {
        const deadline = setTimeout(done, timeoutMs);
        deadline.unref();
        function done() {
          clearTimeout(deadline);
          resolve();
        }
        waiters.push(done);
        settle();
      });
    },
  };
}

function countLines(data: string | Buffer): number {
  const text = typeof data === 'string' ? data : data.toString('utf8');
  let lines = 0;
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) lines += 1;
  return Math.max(lines, 1);
}

/**
 * pino's isoTime formats a new Date on every line (about a microsecond); under load many lines
 * share a millisecond, so the text is kept for the millisecond it was made in.
 */
function createIsoTime(): () => string {
  let millisecond = -1;
  let text = '';
  return () => {
    const now = Date.now();
    if (now !== millisecond) {
      millisecond = now;
      text = `,"time":"${new Date(now).toISOString()}"`;
    }
    return text;
  };
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
      timestamp: createIsoTime(),
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: serializeError },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    destination ?? createLogOutput(),
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
