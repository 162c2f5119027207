/**
 * The OTLP sink: a collector that accepts every export and keeps nothing but counts, so that the
 * bench measures what tracing costs the service, not what a collector costs. Run as its own
 * process, like the ceilings: it shares the machine's CPUs with the service, as a collector on the
 * same host (a sidecar, an agent) would.
 */
import { createServer } from 'node:http';
import { isMessage } from '../ceilings/ceiling-protocol.js';
import type { SinkCountRequest, SinkCounts, SinkReady } from './sink-protocol.js';

let counts: Omit<SinkCounts, 'type'> = { requests: 0, bytes: 0, spans: 0, unreadable: 0 };

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks);
    const spans = request.headers['content-type'] === 'application/x-protobuf' ? countSpans(body) : null;
    counts = {
      requests: counts.requests + 1,
      bytes: counts.bytes + body.length,
      spans: counts.spans + (spans ?? 0),
      unreadable: counts.unreadable + (spans === null ? 1 : 0),
    };
    // An empty ExportTraceServiceResponse: everything accepted.
    response.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': 0 });
    response.end();
  });
});

/**
 * Spans in an ExportTraceServiceRequest: resource_spans (1) > scope_spans (2) > spans (2), each a
 * length-delimited field. Only the framing is read, no span is decoded. Null when it does not parse.
 */
function countSpans(body: Buffer): number | null {
  try {
    let spans = 0;
    for (const resourceSpans of fields(body, 0, body.length, 1)) {
      for (const scopeSpans of fields(body, resourceSpans.start, resourceSpans.end, 2)) {
        for (const _span of fields(body, scopeSpans.start, scopeSpans.end, 2)) spans += 1;
      }
    }
    return spans;
  } catch {
    return null;
  }
}

/** The length-delimited fields numbered `wanted` in body[start, end), skipping every other field. */
function* fields(body: Buffer, start: number, end: number, wanted: number): Generator<{ start: number; end: number }> {
  let at = start;
  const varint = (): number => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = body[at++];
      if (byte === undefined || shift > 49) throw new Error('bad varint');
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
  };
  while (at < end) {
    const key = varint();
    const wireType = key % 8;
    if (wireType === 0) varint();
    else if (wireType === 1) at += 8;
    else if (wireType === 5) at += 4;
    else if (wireType === 2) {
      const length = varint();
      if (at + length > end) throw new Error('field past its end');
      if (Math.floor(key / 8) === wanted) yield { start: at, end: at + length };
      at += length;
    } else throw new Error(`wire type ${wireType}`);
  }
  if (at !== end) throw new Error('misaligned');
}

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address !== 'object') throw new Error('the sink has no port');
  const ready: SinkReady = { type: 'ready', port: address.port };
  process.send?.(ready);
});

process.on('message', (message) => {
  if (isMessage<SinkCountRequest>('count')(message)) {
    const answer: SinkCounts = { type: 'counts', ...counts };
    process.send?.(answer);
  }
});

process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  process.disconnect?.();
});
