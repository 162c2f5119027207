import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  type AccessLineFields,
  createAccessLog,
  createLogger,
  createLogOutput,
  LOG_LEVELS,
  type LogLevel,
  serializeError,
} from './logger.js';

function capture(level: LogLevel) {
  const lines: string[] = [];
  const log = createLogger({ level, destination: { write: (line) => lines.push(line) } });
  return { log, lines, entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('createLogger', () => {
  it('writes one JSON object a line: level label, ISO time, message, fields', () => {
    const { log, lines, entries } = capture('info');
    log.info({ url: 'http://127.0.0.1:1' }, 'listening');
    expect(lines).toHaveLength(1);
    expect(lines[0]?.endsWith('}\n')).toBe(true);
    const [entry] = entries();
    expect(entry).toMatchObject({ level: 'info', message: 'listening', url: 'http://127.0.0.1:1', pid: process.pid });
    expect(entry?.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it.each(LOG_LEVELS)('at level %s writes that level and those above only', (level) => {
    const { log, entries } = capture(level);
    const order = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
    for (const name of order) log[name](name);
    const expected = level === 'silent' ? [] : order.slice(order.indexOf(level));
    expect(entries().map((entry) => entry.level)).toEqual(expected);
  });

  it('censors authorization headers, tokens and bodies should a call site ever pass them', () => {
    const { log, lines } = capture('trace');
    const secrets = {
      authorization: 'Bearer pst_one',
      Authorization: 'Bearer pst_two',
      token: 'pst_three',
      body: '{"name":"body-one"}',
      headers: { authorization: 'Bearer pst_four', cookie: 'session=five', accept: 'application/json' },
      req: { headers: { authorization: 'Bearer pst_six' }, body: { name: 'body-two' } },
      request: { headers: { authorization: 'Bearer pst_seven' }, body: 'body-three' },
    };
    log.trace(secrets, 'careless');
    const text = lines.join('');
    for (const secret of ['pst_', 'Bearer', 'session=five', 'body-one', 'body-two', 'body-three']) {
      expect(text).not.toContain(secret);
    }
    expect(text).toContain('[redacted]');
    expect(text).toContain('"accept":"application/json"');
  });
});

describe('createAccessLog', () => {
  /** The line with its time (the one field two calls may not share) made the same. */
  const timeless = (line: string | undefined) => line?.replace(/"time":"[^"]*"/, '"time":"T"');

  const fields: AccessLineFields[] = [
    { requestId: 'req-1', method: 'POST', route: '/plants', status: 400, durationMs: 0.123, tokenName: 'bench' },
    {
      requestId: 'a'.repeat(128),
      method: 'GET',
      route: '/plants/:id',
      status: 200,
      durationMs: 12,
      tokenName: undefined,
    },
    {
      requestId: 'x:y.z_1-2',
      method: 'DELETE',
      route: 'unmatched',
      status: 404,
      durationMs: 1500.5,
      tokenName: 'team "a" \\ b',
    },
    {
      requestId: '6f1c3a52-2f53-4c36-9d4e-0d7b2d4e9a10',
      method: 'PATCH',
      route: '/webhooks/:id',
      status: 503,
      durationMs: 0,
      tokenName: 'équipe\u2028\n\u0001 🌱',
      trace: { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' },
    },
  ];

  it.each(fields)('writes the line pino writes for the same fields (%o)', (line) => {
    const { log, lines } = capture('info');
    const { trace, ...rest } = line;
    const pinoFields = trace === undefined ? rest : { ...rest, trace_id: trace.traceId, span_id: trace.spanId };
    log.info(pinoFields, 'request');
    createAccessLog(log)(line);
    expect(lines).toHaveLength(2);
    expect(timeless(lines[1])).toBe(timeless(lines[0]));
    const written = JSON.parse(lines[1] as string) as Record<string, unknown>;
    expect(written).toMatchObject({ level: 'info', message: 'request', pid: process.pid, requestId: line.requestId });
    expect(written.tokenName).toBe(line.tokenName);
  });

  it('writes nothing while the logger is above info, and follows a change of level', () => {
    const { log, lines } = capture('warn');
    const writeAccessLine = createAccessLog(log);
    writeAccessLine(fields[0] as AccessLineFields);
    expect(lines).toHaveLength(0);
    log.level = 'debug';
    writeAccessLine(fields[0] as AccessLineFields);
    expect(lines).toHaveLength(1);
  });

  it('writes the bindings of a child logger, as pino does', () => {
    const { log, lines } = capture('info');
    const child = log.child({ component: 'http' });
    child.info({ ...fields[1], tokenName: undefined }, 'request');
    createAccessLog(child)(fields[1] as AccessLineFields);
    expect(timeless(lines[1])).toBe(timeless(lines[0]));
    expect(lines[1]).toContain('"component":"http"');
  });
});

describe('serializeError', () => {
  it('keeps type, message, stack, code and causes, and nothing else an error carries', () => {
    const cause = Object.assign(new RangeError('inner'), { code: 'E_INNER' });
    const error = Object.assign(new Error('outer', { cause }), {
      request: { headers: { authorization: 'Bearer pst_leak' } },
      body: 'leak',
    });
    const serialized = serializeError(error);
    expect(Object.keys(serialized).sort()).toEqual(['cause', 'message', 'stack', 'type']);
    expect(serialized).toMatchObject({
      type: 'Error',
      message: 'outer',
      cause: { type: 'RangeError', code: 'E_INNER' },
    });
    expect(JSON.stringify(serialized)).not.toContain('leak');
    expect(serializeError('plain')).toEqual({ type: 'string', message: 'plain' });
  });

  it('stops following causes after a few levels (a cycle ends)', () => {
    const error = new Error('loop');
    (error as { cause?: unknown }).cause = error;
    expect(JSON.stringify(serializeError(error)).match(/"loop"/g)).toHaveLength(4);
  });

  it('is what pino writes under err', () => {
    const { log, entries } = capture('error');
    log.error({ err: new TypeError('bad') }, 'failed');
    expect(entries()[0]).toMatchObject({ message: 'failed', err: { type: 'TypeError', message: 'bad' } });
  });
});

describe('createLogOutput', () => {
  /** A FIFO opened for writing that nobody reads (yet): what a log pipe nobody reads looks like. */
  async function blockedPipe() {
    const dir = await mkdtemp(join(tmpdir(), 'plant-store-log-'));
    const path = join(dir, 'log.fifo');
    execFileSync('mkfifo', [path]);
    // Read-write, so that opening does not wait for a reader.
    const fd = openSync(path, 'r+');
    return {
      fd,
      /** Reads everything written so far (and so unblocks the writer). */
      async drain(): Promise<string> {
        return (await this.drainBytes()).toString('utf8');
      },
      /** drain(), as bytes: what a read ends with may be part of a character. */
      async drainBytes(): Promise<Buffer> {
        const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
        const chunks: Buffer[] = [];
        const buffer = Buffer.alloc(1 << 16);
        for (;;) {
          let read = 0;
          try {
            read = readSync(reader, buffer);
          } catch {
            break; // EAGAIN: nothing more for now
          }
          if (read === 0) break;
          chunks.push(Buffer.from(buffer.subarray(0, read)));
        }
        closeSync(reader);
        return Buffer.concat(chunks);
      },
      async close() {
        closeSync(fd);
        await rm(dir, { recursive: true, force: true });
      },
    };
  }

  it('batches lines, and writes them all when flushed', async () => {
    const pipe = await blockedPipe();
    try {
      const output = createLogOutput(pipe.fd);
      const log = createLogger({ destination: output });
      for (let index = 0; index < 10; index++) log.info({ index }, 'line');
      await output.flush(5_000);
      const lines = (await pipe.drain()).trimEnd().split('\n');
      expect(lines.map((line) => (JSON.parse(line) as { index: number }).index)).toEqual([
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
      ]);
      expect(output.droppedLines()).toBe(0);
    } finally {
      await pipe.close();
    }
  });

  it('writes lines of any length and script whole and in order: batches filled to the brim, a line longer than a batch', async () => {
    const pipe = await blockedPipe();
    try {
      const output = createLogOutput(pipe.fd);
      // Multibyte text around the batch boundaries (16 KB), then a 100 KB line of 3-byte characters.
      const written = Array.from(
        { length: 300 },
        (_, index) => `${index} ${'é🌱'.repeat(index % 40)} ${'x'.repeat(90)}\n`,
      );
      written.push(`${'ж'.repeat(100_000)}\n`, 'last\n');
      for (const line of written) output.write(line);
      const draining = (async () => {
        const chunks: Buffer[] = [];
        const deadline = Date.now() + 10_000;
        while (!Buffer.concat(chunks).toString('utf8').endsWith('last\n') && Date.now() < deadline) {
          chunks.push(await pipe.drainBytes());
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        return Buffer.concat(chunks).toString('utf8');
      })();
      await output.flush(5_000);
      expect(await draining).toBe(written.join(''));
      expect(output.droppedLines()).toBe(0);
    } finally {
      await pipe.close();
    }
  });

  it('keeps alive no more than it counts against its bound: small batches held behind a blocked destination', async () => {
    const pipe = await blockedPipe();
    try {
      const output = createLogOutput(pipe.fd);
      // The pipe takes 64 KiB; then 4,000 batches of one line each (a line per flush, as a
      // quiet service's timer hands them over) are held, about 1 MB counted.
      const line = `${'x'.repeat(250)}\n`;
      for (let index = 0; index < 300; index++) output.write(line);
      await output.flush(0);
      const before = process.memoryUsage().arrayBuffers;
      for (let index = 0; index < 4_000; index++) {
        output.write(line);
        void output.flush(0);
      }
      const held = process.memoryUsage().arrayBuffers - before;
      // Each held batch a view of a 32 KiB buffer would keep about 128 MB alive.
      expect(held).toBeLessThan(16 * 1024 * 1024);
      expect(output.droppedLines()).toBe(0);
    } finally {
      await pipe.drain();
      await pipe.close();
    }
  });

  it('writes lines logged while a write is in flight before the flush resolves', async () => {
    // sonic-boom calls a flush back when the write in flight ends, even with lines still buffered
    // behind it (as when its periodic flush is writing): `plant-store migrate` lost its last line.
    const pipe = await blockedPipe();
    try {
      const output = createLogOutput(pipe.fd);
      output.write('first\n');
      const first = output.flush(5_000); // 'first' is now being written
      output.write('second\n'); // buffered behind it, under the batch size
      await Promise.all([first, output.flush(5_000)]);
      expect(await pipe.drain()).toBe('first\nsecond\n');
    } finally {
      await pipe.close();
    }
  });

  it('drops and counts what a blocked destination cannot take beyond its 4 MB, and never holds up a flush', async () => {
    const pipe = await blockedPipe();
    try {
      const output = createLogOutput(pipe.fd);
      const log = createLogger({ destination: output });
      // About 30 MB of lines against a pipe that takes 64 KiB and is never read meanwhile.
      const filler = 'x'.repeat(200);
      for (let index = 0; index < 100_000; index++) log.info({ index, filler }, 'line');
      // Held: at most the 4 MB buffer (about 16,000 lines of these) and what the pipe took; the
      // rest, some 84,000 lines, dropped and counted.
      expect(output.droppedLines()).toBeGreaterThan(80_000);
      // On a clock the test moves: the flush ends at its deadline although the pipe never drains.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      let flushed = false;
      const flushing = output.flush(300).then(() => {
        flushed = true;
      });
      await vi.advanceTimersByTimeAsync(299);
      expect(flushed).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await flushing;
      expect(flushed).toBe(true);
    } finally {
      vi.useRealTimers();
      await pipe.drain();
      await pipe.close();
    }
  });
});
