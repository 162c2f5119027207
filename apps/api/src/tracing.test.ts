/**
 * Traces end to end: the real service exports to a real OTLP/HTTP receiver (a server in this
 * test that decodes what arrives), a real webhook receiver gets the deliveries, and the spans
 * and their parent/child links are read from what the receiver got.
 */
import { randomBytes } from 'node:crypto';
import { createTestStorage, type TestStorage, testEngines, testToken } from '@plant-store/db/testing';
import { stringifyJson } from '@plant-store/schema';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { failOnContractViolations } from './test-support/checked-fetch.js';
import { type OtlpReceiver, type ReceivedSpan, SPAN_KIND, startOtlpReceiver } from './test-support/otlp-receiver.js';
import { type ServiceProcess, startServiceProcess } from './test-support/service-process.js';
import { request, startTestService, type TestService } from './test-support/test-service.js';
import { waitUntil } from './test-support/wait-until.js';
import { startWebhookReceiver, type WebhookReceiver } from './test-support/webhook-receiver.js';

failOnContractViolations();

/**
 * Receivers on loopback, retries in milliseconds, spans exported 50 ms after they end. A delivery
 * may take up to 10 s (a 1 s limit timed out a receiver that answers at once, on a loaded CI run:
 * an attempt marked as an error where the test expects none).
 */
const TEST_ENV = {
  WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOKS_POLL_MS: '50',
  WEBHOOKS_RETRY_SCHEDULE: '100ms,200ms',
  WEBHOOKS_TIMEOUT_MS: '10000',
  WEBHOOKS_LEASE_MS: '20000',
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_BSP_SCHEDULE_DELAY: '50',
};

const SCOPES = ['plants:read', 'plants:write', 'webhooks:manage'];

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

type LogEntry = Record<string, unknown>;

function accessLine(service: TestService, requestId: string): LogEntry | undefined {
  return service.logs
    .map((line) => JSON.parse(line) as LogEntry)
    .find((entry) => entry.message === 'request' && entry.requestId === requestId);
}

describe.each(testEngines())('traces on %s', (engine) => {
  let storage: TestStorage;
  let collector: OtlpReceiver;
  let hook: WebhookReceiver;
  let service: TestService;
  let token: string;
  let subscription: { id: string; secret: string };

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    collector = await startOtlpReceiver();
    hook = await startWebhookReceiver();
    service = await startTestService(storage, { ...TEST_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    token = (await service.db.issueToken(testToken({ name: 'traces', scopes: SCOPES }))).token;
    const created = await request(service.url, '/webhooks', { body: JSON.stringify({ url: hook.url }), token });
    expect(created.status).toBe(201);
    subscription = created.body as { id: string; secret: string };
  });
  afterAll(async () => {
    await service?.close();
    await hook?.close();
    await collector?.close();
    await storage?.dispose();
  });

  const spanNamed = (traceId: string, name: string) => (span: ReceivedSpan) =>
    span.traceId === traceId && span.name === name;

  it('links a create to its caller, its INSERT and its webhook delivery, across the outbox; the receiver and the log get the ids', async () => {
    const traceId = hex(16);
    const callerSpanId = hex(8);
    const plantId = 9_007_199_254_740_993n;
    const response = await request(service.url, '/plants', {
      body: stringifyJson({ id: plantId, name: 'Traced fern' }),
      token,
      headers: { traceparent: `00-${traceId}-${callerSpanId}-01`, 'X-Request-Id': 'traced-create' },
    });
    expect(response.status).toBe(200);

    // The server span: the caller's child, named by the route's pattern, with the semantic
    // conventions' attributes and nothing from the request's data.
    const server = await collector.waitForSpan(spanNamed(traceId, 'POST /plants'));
    expect(server).toMatchObject({ kind: SPAN_KIND.server, parentSpanId: callerSpanId, statusCode: 0 });
    expect(server.attributes).toEqual({
      'http.request.method': 'POST',
      'http.route': '/plants',
      'http.response.status_code': 200,
      'url.scheme': 'http',
    });
    expect(server.resource).toMatchObject({ 'service.name': 'plant-store', 'service.version': '1.0.0' });

    // The database span: the create's wait for its row (the group-commit INSERT), a child of the request's.
    const insert = await collector.waitForSpan(spanNamed(traceId, 'INSERT plants'));
    expect(insert).toMatchObject({ kind: SPAN_KIND.client, parentSpanId: server.spanId, statusCode: 0 });
    expect(insert.attributes).toMatchObject({
      'db.system.name': 'postgresql',
      'db.operation.name': 'INSERT',
      'db.collection.name': 'plants',
    });
    if (storage.databaseUrl) {
      expect(insert.attributes['db.namespace']).toBe(new URL(storage.databaseUrl).pathname.slice(1));
    }

    // The delivery: sent later by the dispatcher from what the outbox stored, yet in the same
    // trace, a child of the create's server span; its own traceparent went to the receiver.
    const [event] = await hook.waitFor(1);
    if (!event) throw new Error('no delivery');
    const sent = TRACEPARENT.exec(event.headers.traceparent ?? '');
    expect(sent?.[1]).toBe(traceId);
    const delivery = await collector.waitForSpan(
      (span) => span.traceId === traceId && span.kind === SPAN_KIND.client && span.name === 'POST',
    );
    expect(delivery.spanId).toBe(sent?.[2]);
    expect(delivery).toMatchObject({ parentSpanId: server.spanId, statusCode: 0 });
    const receiverPort = Number(new URL(hook.url).port);
    expect(delivery.attributes).toMatchObject({
      'http.request.method': 'POST',
      'url.full': hook.url,
      'server.address': '127.0.0.1',
      'server.port': receiverPort,
      'http.response.status_code': 200,
      'webhook.id': subscription.id,
      'webhook.event.id': event.headers['webhook-id'],
      'webhook.attempt': 1,
    });
    expect(delivery.attributes['webhook.delivery.id']).toMatch(/^\d+$/);
    expect(delivery.attributes).not.toHaveProperty('error.type');
    // The signature covers the body only: the added header changes nothing for a verifying receiver.
    expect(() => new Webhook(subscription.secret).verify(event.body, event.headers)).not.toThrow();

    // The access line names the same trace and span.
    expect(accessLine(service, 'traced-create')).toMatchObject({ trace_id: traceId, span_id: server.spanId });
    // No span holds the plant's id or name (the path and body stay out of traces).
    const everything = JSON.stringify(collector.spans());
    expect(everything).not.toContain(String(plantId));
    expect(everything).not.toContain('Traced fern');
    // The dispatcher's claims and records run outside any request: no root spans of their own.
    expect(collector.spans().filter((span) => span.name.startsWith('UPDATE'))).toEqual([]);
  });

  it('names spans by route pattern, never the raw path; unmatched routes by method alone; roots without a traceparent', async () => {
    const id = 4_242_424_242n;
    const found = await request(service.url, `/plants/${id}`, { token, headers: { 'X-Request-Id': 'traced-get' } });
    expect(found.status).toBe(404);
    const traceId = String(accessLine(service, 'traced-get')?.trace_id);
    const get = await collector.waitForSpan(spanNamed(traceId, 'GET /plants/:id'));
    expect(get.parentSpanId).toBeUndefined();
    expect(get.attributes).toMatchObject({ 'http.route': '/plants/:id', 'http.response.status_code': 404 });
    expect(get.statusCode).toBe(0); // A 404 is the client's, not a failure.
    const select = await collector.waitForSpan(spanNamed(traceId, 'SELECT plants'));
    expect(select.parentSpanId).toBe(get.spanId);

    const unmatched = await request(service.url, `/no/such/${id}`, { headers: { 'X-Request-Id': 'traced-404' } });
    expect(unmatched.status).toBe(404);
    const unmatchedTrace = String(accessLine(service, 'traced-404')?.trace_id);
    const bare = await collector.waitForSpan((span) => span.traceId === unmatchedTrace);
    expect(bare.name).toBe('GET');
    expect(bare.attributes).not.toHaveProperty('http.route');
    expect(JSON.stringify(collector.spans())).not.toContain(String(id));
  });

  it('gives each attempt of a failing delivery its own span under the same create, marked as an error', async () => {
    const traceId = hex(16);
    hook.answer((_event, index) => (index === 1 ? 503 : 200));
    const before = hook.received.length;
    await request(service.url, '/plants', {
      body: stringifyJson({ id: 77n, name: 'Retried' }),
      token,
      headers: { traceparent: `00-${traceId}-${hex(8)}-01` },
    });
    await hook.waitFor(before + 2);
    const server = await collector.waitForSpan(spanNamed(traceId, 'POST /plants'));
    const attempt = (number: number) => (span: ReceivedSpan) =>
      span.traceId === traceId && span.kind === SPAN_KIND.client && span.attributes['webhook.attempt'] === number;
    const failed = await collector.waitForSpan(attempt(1));
    const retried = await collector.waitForSpan(attempt(2));
    expect(failed).toMatchObject({ parentSpanId: server.spanId, statusCode: 2, statusMessage: 'HTTP 503' });
    expect(failed.attributes).toMatchObject({ 'http.response.status_code': 503, 'error.type': '503' });
    expect(retried).toMatchObject({ parentSpanId: server.spanId, statusCode: 0 });
    expect(retried.attributes).toMatchObject({ 'http.request.resend_count': 1, 'http.response.status_code': 200 });
    expect(retried.attributes['webhook.event.id']).toBe(failed.attributes['webhook.event.id']);
    hook.answer(() => 200);
  });

  it('traces the token lookup that reaches the database, not the answers of the token directory', async () => {
    const { token: known } = await service.db.issueToken(testToken({ name: 'fresh', scopes: ['plants:read'] }));
    const madeUp = `${known.slice(0, -1)}${known.endsWith('A') ? 'B' : 'A'}`;
    const send = (token: string, id: string) =>
      request(service.url, '/plants?limit=1', { token, headers: { 'X-Request-Id': id } });
    expect((await send(known, 'lookup-known')).status).toBe(200);
    expect((await send(madeUp, 'lookup-1')).status).toBe(401);
    expect((await send(madeUp, 'lookup-2')).status).toBe(401);
    const traceOf = (id: string) => String(accessLine(service, id)?.trace_id);
    // A made-up token is looked up once; its second request, and every request of a token the
    // process holds, ask the database nothing.
    await collector.waitForSpan(spanNamed(traceOf('lookup-1'), 'SELECT api_tokens'));
    await collector.waitForSpan(spanNamed(traceOf('lookup-known'), 'SELECT plants'));
    await collector.waitForSpan((span) => span.traceId === traceOf('lookup-2'));
    expect(collector.spans().filter(spanNamed(traceOf('lookup-known'), 'SELECT api_tokens'))).toEqual([]);
    expect(collector.spans().filter(spanNamed(traceOf('lookup-2'), 'SELECT api_tokens'))).toEqual([]);
  });
});

describe('tracing at shutdown', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setUp(env: Record<string, string>) {
    const storage = await createTestStorage('pglite', { migrated: true });
    cleanups.push(() => storage.dispose());
    const collector = await startOtlpReceiver();
    cleanups.push(() => collector.close());
    const service = await startTestService(storage, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, ...env });
    cleanups.push(() => service.close());
    return { collector, service };
  }

  it('exports the spans still buffered when the service closes', async () => {
    // Nothing would leave before a minute: only the shutdown flush sends it.
    const { collector, service } = await setUp({
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '60000',
    });
    expect((await request(service.url, '/healthz')).status).toBe(200);
    expect(collector.requests).toEqual([]);
    await service.close();
    expect(collector.spans().map((span) => span.name)).toContain('GET /healthz');
  });

  it('does not hold shutdown for long on a collector that never answers', async () => {
    const { collector, service } = await setUp({ OTEL_BSP_SCHEDULE_DELAY: '60000' });
    collector.hang();
    expect((await request(service.url, '/healthz')).status).toBe(200);
    const started = performance.now();
    await service.close();
    expect(collector.requests.length).toBeGreaterThan(0);
    // The exporter's own timeout is 10 s; shutdown gives it 2.
    expect(performance.now() - started).toBeLessThan(4_000);
  });
});

/**
 * Run as a process, with a module hook that reports every OpenTelemetry SDK module the process
 * resolves: whether tracing off loads none of them can only be seen from outside. (The API
 * package, @opentelemetry/api, is left out: prom-client loads it for its exemplars, tracing or not.)
 */
describe('tracing off, and the default protocol, in a service process', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  const REPORT_OTEL_MODULES = `data:text/javascript,${encodeURIComponent(
    'import { registerHooks } from "node:module";' +
      'registerHooks({ resolve(specifier, context, next) { const resolved = next(specifier, context);' +
      ' if (/\\/@opentelemetry\\/(?!api\\/)/.test(resolved.url)) process.stderr.write("otel module: " + resolved.url + "\\n");' +
      ' return resolved; } });',
  )}`;

  async function startService(env: Record<string, string>): Promise<ServiceProcess> {
    const storage = await createTestStorage('pglite', { migrated: true });
    cleanups.push(() => storage.dispose());
    const service = await startServiceProcess(
      {
        DATA_DIR: storage.dataDir,
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${REPORT_OTEL_MODULES}`.trim(),
        ...env,
      },
      // Up, and the first-run token printed.
      (output) => output.includes('PLANT_STORE_TOKEN='),
    );
    cleanups.push(() => service.kill());
    return service;
  }

  /** A create and a read, whose output shows any OpenTelemetry module resolved on the way. */
  async function exercise(service: ServiceProcess, headers: Record<string, string> = {}): Promise<void> {
    const token = /PLANT_STORE_TOKEN=(pst_\S+)/.exec(service.output())?.[1];
    if (!token) throw new Error(`no first-run token in ${service.output()}`);
    const created = await request(service.url, '/plants', { body: '{"id": 1, "name": "Fern"}', token, headers });
    expect(created.status).toBe(200);
    expect((await request(service.url, '/plants/1', { token })).status).toBe(200);
  }

  it('loads no OpenTelemetry SDK module and exports nothing without an endpoint, or when disabled', async () => {
    const collector = await startOtlpReceiver();
    cleanups.push(() => collector.close());
    for (const env of [{}, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SDK_DISABLED: 'true' }]) {
      const service = await startService(env);
      await exercise(service, { traceparent: `00-${hex(16)}-${hex(8)}-01` });
      expect(service.output()).toContain('"tracing":"off"');
      expect(service.output()).not.toContain('otel module:');
      expect(service.output()).not.toContain('trace_id');
      await service.kill();
    }
    expect(collector.requests).toEqual([]);
  });

  it('exports OTLP protobuf by default (the specification’s default protocol)', async () => {
    const collector = await startOtlpReceiver();
    cleanups.push(() => collector.close());
    const service = await startService({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '50' });
    const traceId = hex(16);
    await exercise(service, { traceparent: `00-${traceId}-${hex(8)}-01` });
    await waitUntil(
      () => collector.requests.some((sent) => sent.body.includes(Buffer.from(traceId, 'hex'))),
      15_000,
      25,
    );
    const [sent] = collector.requests;
    expect(sent?.path).toBe('/v1/traces');
    expect(sent?.contentType).toBe('application/x-protobuf');
    // Trace ids travel as their 16 raw bytes in protobuf (no decoder is published to check more).
    expect(collector.requests.some((sent) => sent.body.includes(Buffer.from(traceId, 'hex')))).toBe(true);
    expect(service.output()).toContain('otel module:');
    expect(service.output()).toContain(`"tracing":"http/protobuf to ${collector.url}/v1/traces"`);
  });

  it('refuses grpc at start with a line naming the variable', async () => {
    const service = startService({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    });
    await expect(service).rejects.toThrow(
      /service exited early \(code 1\).*OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: this service exports OTLP over HTTP/s,
    );
  });
});
