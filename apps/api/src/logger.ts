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
 * Lines wait until this many bytes are buffered (about 70 access lines), or LOG_FLUSH_INTERVAL_MS:
 * one write per line cost the service about 40 us of CPU per request (the write's round trip
 * through libuv's thread pool), a third of what a read costs; a write per 4 KB still cost about
 * a microsecond a request.
 */
const LOG_BATCH_BYTES = 16 * 1024;
/** Room for a batch and the line that completes it (a longer line is written on its own). */
const LOG_BATCH_CAPACITY = LOG_BATCH_BYTES + 16 * 1024;
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
    // Handed bytes, encoded once here: given a string, sonic-boom measures its UTF-8 length as
    // it takes it, and encodes it again after the write to find what was written.
    contentMode: 'buffer',
  });
  // In buffer mode its write() takes Buffers; its types know strings only.
  const writeBytes = stream.write.bind(stream) as unknown as (data: Buffer) => boolean;
  let dropped = 0;
  let broken = false;
  // Lines not yet handed to the stream, encoded as they come into one reused buffer: no array of
  // lines to join and encode later. A batch is handed over as a copy of its own size, so that
  // what sonic-boom holds (and counts against LOG_BUFFER_MAX_BYTES) is all it keeps alive.
  const batch = Buffer.allocUnsafeSlow(LOG_BATCH_CAPACITY);
  let batchBytes = 0;
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
  stream.on('drop', (data: Buffer) => {
    dropped += countLines(data);
    settled += data.length;
    settle();
  });
  stream.on('error', () => {
    broken = true;
    settle();
  });
  const handOver = () => {
    if (batchBytes === 0) return;
    // Not pooled: a small batch held in a pool slab would keep the whole slab alive.
    const bytes = Buffer.allocUnsafeSlow(batchBytes);
    batch.copy(bytes, 0, 0, batchBytes);
    batchBytes = 0;
    hand(bytes);
  };
  const hand = (bytes: Buffer) => {
    if (broken) {
      dropped += countLines(bytes);
      return;
    }
    accepted += bytes.length;
    writeBytes(bytes);
  };
  const timer = setInterval(handOver, LOG_FLUSH_INTERVAL_MS);
  timer.unref();
  return {
    write(line: string) {
      if (broken) {
        dropped += 1;
        return;
      }
      // A UTF-16 code unit takes at most 3 bytes in UTF-8.
      if (batchBytes + line.length * 3 > batch.length) {
        handOver();
        // A line longer than a batch (a long error) goes on its own.
        if (line.length * 3 > batch.length) return hand(Buffer.from(line));
      }
      batchBytes += batch.write(line, batchBytes);
      if (batchBytes >= LOG_BATCH_BYTES) handOver();
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

function countLines(data: Buffer): number {
  let lines = 0;
  for (let index = data.indexOf(0x0a); index !== -1; index = data.indexOf(0x0a, index + 1)) lines += 1;
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

/** The fields of a request's access line (see observeRequests), in the order the line writes them. */
export interface AccessLineFields {
  readonly requestId: string;
  readonly method: string;
  readonly route: string;
  readonly status: number;
  readonly durationMs: number;
  /** The name of the token that authenticated the request; absent when none did. */
  readonly tokenName: string | undefined;
  /** With tracing on: the request's server span. */
  readonly trace?: { readonly traceId: string; readonly spanId: string } | undefined;
}

/** Writes one request's access line, at info level, when `log` writes info. */
export type AccessLog = (fields: AccessLineFields) => void;

/**
 * The access line, formatted here rather than by pino: the same line `log.info(fields, 'request')`
 * writes (level, time and the logger's bindings as pino keeps them, then the fields, then the
 * message; a test holds the two equal), to the same destination. Every request writes one, and
 * pino's general path (a loop over any object's keys, serializers, redaction) cost the 400 path
 * about a tenth of its CPU; this one fixed shape is one template. Its fields are the service's own
 * choice, none a redacted key; the strings a client or an issuer chose (the request id, the token
 * name) are written by JSON.stringify. It holds for the logger createLogger makes: a logger with a
 * mixin, log formatters, a nested key or bindings changed later (setBindings) would write other
 * lines than pino; so would a lone surrogate in a string, which pino writes raw and JSON.stringify
 * escapes (request ids and token names are ASCII by their rules).
 */
export function createAccessLog(log: Logger): AccessLog {
  const { streamSym, timeSym, chindingsSym } = pino.symbols;
  const destination = (log as unknown as Record<symbol, pino.DestinationStream>)[streamSym];
  const time = (log as unknown as Record<symbol, () => string>)[timeSym];
  // The bindings pino writes on every line of this logger (`,"pid":1,"hostname":"..."`).
  const bindings = (log as unknown as Record<symbol, string>)[chindingsSym];
  if (destination === undefined || time === undefined || bindings === undefined) {
    throw new Error('createAccessLog: not a pino logger');
  }
  return ({ requestId, method, route, status, durationMs, tokenName, trace }) => {
    if (!log.isLevelEnabled('info')) return;
    const token = tokenName === undefined ? '' : `,"tokenName":${JSON.stringify(tokenName)}`;
    const span = trace === undefined ? '' : `,"trace_id":"${trace.traceId}","span_id":"${trace.spanId}"`;
    destination.write(
      `{"level":"info"${time()}${bindings},"requestId":${JSON.stringify(requestId)},"method":${JSON.stringify(method)},"route":${JSON.stringify(route)},"status":${status},"durationMs":${durationMs}${token}${span},"message":"request"}\n`,
    );
  };
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
