import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST the receiver got, as sent. */
export interface OtlpRequest {
  readonly path: string;
  readonly contentType: string | undefined;
  readonly body: Buffer;
}

/** A span as OTLP/JSON carries it, attributes flattened to plain values. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Absent (or empty) for a root span. */
  readonly parentSpanId: string | undefined;
  readonly name: string;
  /** OTLP's SpanKind: the API's kind + 1 (SERVER = 2, CLIENT = 3). */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, unknown>>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
  readonly statusMessage: string | undefined;
  readonly resource: Readonly<Record<string, unknown>>;
}

export const SPAN_KIND = { server: 2, client: 3 } as const;

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: what OTEL_EXPORTER_OTLP_ENDPOINT names (the exporter appends /v1/traces). */
  readonly url: string;
  readonly requests: OtlpRequest[];
  /** Every span of every OTLP/JSON request so far. */
  spans(): ReceivedSpan[];
  /** Resolves with the first span `match` accepts (or rejects after `timeoutMs`). */
  waitForSpan(match: (span: ReceivedSpan) => boolean, timeoutMs?: number): Promise<ReceivedSpan>;
  /** Stops answering: requests are held open and never answered (a hung collector). */
  hang(): void;
  close(): Promise<void>;
}

/**
 * A real OTLP/HTTP receiver on a loopback port, as a collector would be: it accepts what the
 * exporter POSTs, answers 200, and decodes OTLP/JSON bodies (protobuf ones are kept as bytes).
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const requests: OtlpRequest[] = [];
  const hanging = new Set<ServerResponse>();
  let hung = false;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({
        path: request.url ?? '',
        contentType: request.headers['content-type'],
        body: Buffer.concat(chunks),
      });
      if (hung) {
        hanging.add(response);
        return;
      }
      // An empty ExportTraceServiceResponse: everything accepted.
      const json = request.headers['content-type']?.startsWith('application/json') === true;
      response.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      response.end(json ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const spans = () => requests.flatMap((request) => (isJson(request) ? decodeSpans(request.body) : []));
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    spans,
    async waitForSpan(match, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = spans().find(match);
        if (found) return found;
        if (Date.now() > deadline) {
          const names = spans().map((span) => `${span.name} (${span.spanId})`);
          throw new Error(`no matching span within ${timeoutMs} ms; received: ${names.join(', ') || 'none'}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    hang() {
      hung = true;
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function isJson(request: OtlpRequest): boolean {
  return request.contentType?.startsWith('application/json') === true;
}

interface JsonKeyValue {
  readonly key: string;
  readonly value: Record<string, unknown>;
}

interface JsonSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes?: JsonKeyValue[];
  readonly status?: { readonly code?: number; readonly message?: string };
}

interface JsonRequest {
  readonly resourceSpans?: Array<{
    readonly resource?: { readonly attributes?: JsonKeyValue[] };
    readonly scopeSpans?: Array<{ readonly spans?: JsonSpan[] }>;
  }>;
}

/** An ExportTraceServiceRequest in OTLP/JSON, as the spans it carries. */
function decodeSpans(body: Buffer): ReceivedSpan[] {
  const request = JSON.parse(body.toString('utf8')) as JsonRequest;
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = flatten(resourceSpans.resource?.attributes);
    return (resourceSpans.scopeSpans ?? []).flatMap((scopeSpans) =>
      (scopeSpans.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId === '' ? undefined : span.parentSpanId,
        name: span.name,
        kind: span.kind,
        attributes: flatten(span.attributes),
        statusCode: span.status?.code ?? 0,
        statusMessage: span.status?.message,
        resource,
      })),
    );
  });
}

/** `[{ key, value: { stringValue | intValue | ... } }]` as `{ key: value }`; int64s (strings in JSON) as numbers. */
function flatten(attributes: JsonKeyValue[] | undefined): Record<string, unknown> {
  const flat: Record<string, unknown> = {};
  for (const { key, value } of attributes ?? []) {
    const [kind, raw] = Object.entries(value)[0] ?? [];
    flat[key] = kind === 'intValue' ? Number(raw) : raw;
  }
  return flat;
}
