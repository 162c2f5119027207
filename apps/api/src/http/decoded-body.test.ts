import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  compressors,
  GARBAGE,
  issue28Reproducer,
  jsonOfSize,
  truncated,
  wrongChecksum,
} from '../test-support/compressed-bodies.js';
import { waitUntil } from '../test-support/wait-until.js';
import { ApiError } from './api-error.js';
import {
  ABORTED_MESSAGE,
  bodyTooLargeMessage,
  CONTENT_ENCODING_MESSAGE,
  type DecodedBodyOptions,
  decodedBody,
  UNDECODABLE_MESSAGE,
} from './decoded-body.js';

/** What the server made of one request's body: its decoded bytes, or the error it failed with. */
type Outcome = { bytes: Buffer } | { code: number; status: number; message: string };

describe('decodedBody', () => {
  let server: Server;
  let url: string;
  /** Options per request (by its path) and what became of each. */
  const optionsByPath = new Map<string, DecodedBodyOptions>();
  const outcomes = new Map<string, Promise<Outcome>>();
  /** A reader that stops after its first chunk (by path): destroys the decoded stream. */
  const givingUp = new Set<string>();
  /** A reader that starts once the request has ended and lets timers run between chunks (by path), as a busy service may. */
  const slow = new Set<string>();
  const requests = new Map<string, IncomingMessage>();

  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = req.url ?? '';
      requests.set(path, req);
      const outcome = readAll(req, optionsByPath.get(path) ?? {}, givingUp.has(path), slow.has(path));
      outcomes.set(path, outcome);
      void outcome.then((result) => {
        res.statusCode = 'bytes' in result ? 200 : result.status;
        res.setHeader('Connection', 'close');
        res.end();
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    server.close();
  });

  async function readAll(
    req: IncomingMessage,
    options: DecodedBodyOptions,
    giveUp: boolean,
    slowly: boolean,
  ): Promise<Outcome> {
    try {
      const stream = decodedBody(req, options);
      if (slowly && !req.complete) await once(req, 'end');
      const chunks: Buffer[] = [];
      for await (const chunk of stream) {
        chunks.push(chunk as Buffer);
        if (slowly) await new Promise((resolve) => setTimeout(resolve, 1));
        if (giveUp) {
          stream.destroy();
          return { bytes: Buffer.concat(chunks) };
        }
      }
      return { bytes: Buffer.concat(chunks) };
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return { code: error.code, status: error.status, message: error.message };
    }
  }

  let next = 0;
  /** Sends `body` with `coding`; resolves with what the server made of it. */
  async function send(
    body: Buffer,
    coding: string | undefined,
    options: DecodedBodyOptions = {},
    reader: 'fast' | 'slow' = 'fast',
  ): Promise<Outcome> {
    const path = `/${next++}`;
    optionsByPath.set(path, options);
    if (reader === 'slow') slow.add(path);
    await fetch(`${url}${path}`, {
      method: 'POST',
      body,
      headers: coding === undefined ? {} : { 'content-encoding': coding },
    });
    const outcome = outcomes.get(path);
    if (outcome === undefined) throw new Error(`no request reached ${path}`);
    return outcome;
  }

  it.each(['gzip', 'deflate', 'br'] as const)(
    'decodes %s, whatever the size, when no limit is given',
    async (coding) => {
      // Far over any JSON limit: the later streaming import reads bodies without one.
      const ndjson = Buffer.from(Array.from({ length: 100_000 }, (_, id) => `{"id":${id},"name":"p${id}"}\n`).join(''));
      const outcome = await send(compressors[coding](ndjson), coding);
      expect(outcome).toEqual({ bytes: ndjson });
    },
  );

  it('passes identity through, counted against a limit when one is given', async () => {
    const plain = jsonOfSize(100);
    expect(await send(plain, undefined)).toEqual({ bytes: plain });
    expect(await send(plain, 'IDENTITY', { maxBytes: 100 })).toEqual({ bytes: plain });
    // Announced over the limit by its Content-Length: refused before a byte is read.
    expect(await send(plain, undefined, { maxBytes: 99 })).toEqual({
      code: 413,
      status: 413,
      message: bodyTooLargeMessage(99),
    });
  });

  it('reads codings in any case and refuses one it does not read, or a list, with 415', async () => {
    const plain = jsonOfSize(50);
    expect(await send(gzipSync(plain), 'GZip')).toEqual({ bytes: plain });
    for (const coding of ['zstd', 'gzip, br', 'compress']) {
      expect(await send(plain, coding)).toEqual({ code: 415, status: 415, message: CONTENT_ENCODING_MESSAGE });
    }
  });

  describe.each(['gzip', 'deflate', 'br'] as const)('%s', (coding) => {
    const limit = 4096;
    const compress = compressors[coding];
    const undecodable = { code: 400, status: 400, message: UNDECODABLE_MESSAGE };
    const tooLarge = { code: 413, status: 413, message: bodyTooLargeMessage(limit) };

    it('refuses bytes that are no such stream with 400', async () => {
      expect(await send(GARBAGE, coding, { maxBytes: limit })).toEqual(undecodable);
    });

    it.each([limit - 1, limit])('reads a body of %i decoded bytes (the limit is %#: 4096)', async (size) => {
      expect(await send(compress(jsonOfSize(size)), coding, { maxBytes: limit })).toEqual({ bytes: jsonOfSize(size) });
    });

    it.each([limit + 1, 2 * limit, 64 * limit])('refuses a body of %i decoded bytes with 413', async (size) => {
      expect(await send(compress(jsonOfSize(size)), coding, { maxBytes: limit })).toEqual(tooLarge);
    });

    // A stream both corrupt at its end and over the limit is refused as whichever is found first:
    // 413 once decoded bytes past the limit come out of the decoder, 400 when the decoder reports
    // the fault with the piece (up to 16 KiB) that would have passed it.
    const eitherFault = [undecodable, tooLarge];
    const aroundTheLimit = [
      [limit - 1, [undecodable]],
      [limit, [undecodable]],
      [limit + 1, eitherFault],
      [limit + 16 * 1024, eitherFault],
      [limit + 32 * 1024, [tooLarge]],
    ] as const;

    it.each(aroundTheLimit)('refuses a stream cut short after %i decoded bytes', async (size, expected) => {
      const outcome = await send(truncated(compress(jsonOfSize(size))), coding, { maxBytes: limit });
      expect(expected).toContainEqual(outcome);
    });

    if (coding !== 'br') {
      it.each(aroundTheLimit)('refuses a wrong checksum after %i decoded bytes', async (size, expected) => {
        const outcome = await send(wrongChecksum(coding, compress(jsonOfSize(size))), coding, { maxBytes: limit });
        expect(expected).toContainEqual(outcome);
      });
    }

    // The decoder finds the fault while what it decoded before it still waits in the streams for a
    // reader that is behind: the bytes decoded decide, not how far the reader had got.
    it('refuses a stream cut short far past the limit with 413 however late and slowly it is read', async () => {
      const max = 65_536;
      const body = truncated(compress(jsonOfSize(max + 32 * 1024)));
      const outcome = await send(body, coding, { maxBytes: max }, 'slow');
      expect(outcome).toEqual({ code: 413, status: 413, message: bodyTooLargeMessage(max) });
    });
  });

  it.each(['gzip', 'deflate'] as const)(
    "refuses issue 28's reproducer in %s (nesting past the limit, then a wrong checksum) with 413, nothing unhandled",
    async (coding) => {
      expect(await send(issue28Reproducer(coding), coding, { maxBytes: 65_536 })).toEqual({
        code: 413,
        status: 413,
        message: bodyTooLargeMessage(65_536),
      });
    },
  );

  it('stops decoding and lets the request go when its reader gives up, however the rest is corrupt', async () => {
    const path = `/${next++}`;
    givingUp.add(path);
    optionsByPath.set(path, {});
    // A wrong checksum at the end of a stream far longer than the first chunk read.
    const compressed = wrongChecksum('gzip', gzipSync(jsonOfSize(4 * 1024 * 1024)));
    await fetch(`${url}${path}`, { method: 'POST', body: compressed, headers: { 'content-encoding': 'gzip' } });
    const outcome = await outcomes.get(path);
    expect(outcome && 'bytes' in outcome && outcome.bytes.length).toBeGreaterThan(0);
    const req = requests.get(path);
    // Unhooked: nothing of the request is piped anywhere any more.
    expect(req?.listenerCount('data')).toBe(0);
  });

  it.each([
    ['gzip, limited', 'Content-Encoding: gzip\r\n', { maxBytes: 1_000_000 }],
    ['identity, unlimited', '', {}],
  ] as const)(
    'fails with 400 when the connection ends mid-body (%s), and at once for a request already gone',
    async (_label, coding, options) => {
      const path = `/${next++}`;
      optionsByPath.set(path, options);
      const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
      socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\n${coding}Content-Length: 100000\r\n\r\n`);
      socket.write(gzipSync(jsonOfSize(10_000)).subarray(0, 50));
      await waitUntil(() => outcomes.has(path));
      socket.destroy();
      expect(await outcomes.get(path)).toEqual({ code: 400, status: 400, message: ABORTED_MESSAGE });

      const req = requests.get(path);
      if (req === undefined) throw new Error('no request');
      expect(() => decodedBody(req, options)).toThrow(ABORTED_MESSAGE);
    },
  );
});
