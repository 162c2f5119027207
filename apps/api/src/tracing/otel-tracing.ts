/**
 * Tracing with the OpenTelemetry SDK: loaded only when tracing is on (see start-tracing.ts).
 *
 * The tracer, the context manager and the propagator are used through their own instances, not
 * through the API's globals, so that nothing here depends on what else registered globals. They
 * are registered as globals too (for any OpenTelemetry-aware library), and given back at shutdown.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import {
  type Attributes,
  type Context,
  context,
  type DiagLogger,
  DiagLogLevel,
  defaultTextMapGetter,
  defaultTextMapSetter,
  diag,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  type SpanOptions,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { CompressionAlgorithm } from '@opentelemetry/otlp-exporter-base';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import {
  ATTR_DB_COLLECTION_NAME,
  ATTR_DB_NAMESPACE,
  ATTR_DB_OPERATION_NAME,
  ATTR_DB_SYSTEM_NAME,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_METHOD_ORIGINAL,
  ATTR_HTTP_REQUEST_RESEND_COUNT,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_INSTANCE_ID,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
  ATTR_URL_FULL,
  ATTR_URL_SCHEME,
  DB_SYSTEM_NAME_VALUE_POSTGRESQL,
  ERROR_TYPE_VALUE_OTHER,
  HTTP_REQUEST_METHOD_VALUE_OTHER,
} from '@opentelemetry/semantic-conventions';
import { type ClaimedDelivery, type DatabaseOperation, parsePostgresUrl } from '@plant-store/db';
import type { Logger } from '../logger.js';
import { UNMATCHED_ROUTE } from '../metrics/service-metrics.js';
import type { PostWebhookResult } from '../webhooks/safe-http.js';
import type { StartTracingOptions } from './start-tracing.js';
import type { Tracing } from './tracing.js';
import type { TracesSampler, TracingOn } from './tracing-config.js';

/** The instrumentation scope every span of this service carries. */
const SCOPE = '@plant-store/api';
/** The longest shutdown waits for the last spans to go: a dead collector must not hold a deployment. */
const SHUTDOWN_TIMEOUT_MS = 2_000;
/** The SDK's own complaints (a collector that fails every export) reach the log at most this often. */
const DIAG_WARN_INTERVAL_MS = 60_000;

/** Methods semantic conventions name as such; any other is `_OTHER`, its span `HTTP`. */
const KNOWN_METHODS: ReadonlySet<string> = new Set([
  'CONNECT',
  'DELETE',
  'GET',
  'HEAD',
  'OPTIONS',
  'PATCH',
  'POST',
  'PUT',
  'TRACE',
]);

/** Custom attributes of a delivery attempt's span (the rest are HTTP client conventions). */
const WEBHOOK_ATTRIBUTES = {
  /** The subscription, as in `/webhooks/{id}`. */
  webhookId: 'webhook.id',
  /** The event: the `webhook-id` header the receiver gets (`msg_...`), the same on every attempt. */
  eventId: 'webhook.event.id',
  /** The delivery, as in `/webhooks/{id}/deliveries/{deliveryId}`. */
  deliveryId: 'webhook.delivery.id',
  /** 1 for the first attempt. */
  attempt: 'webhook.attempt',
} as const;

export async function createTracing(config: TracingOn, { log, databaseUrl }: StartTracingOptions): Promise<Tracing> {
  // Only the exporter the protocol needs is loaded.
  const { OTLPTraceExporter } =
    config.exporter.protocol === 'http/json'
      ? await import('@opentelemetry/exporter-trace-otlp-http')
      : await import('@opentelemetry/exporter-trace-otlp-proto');
  const exporter = new OTLPTraceExporter({
    url: config.exporter.url,
    headers: { ...config.exporter.headers },
    timeoutMillis: config.exporter.timeoutMs,
    compression: config.exporter.compression === 'gzip' ? CompressionAlgorithm.GZIP : CompressionAlgorithm.NONE,
  });
  const version = readServiceVersion();
  const provider = new TracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({
        ...(version === undefined ? {} : { [ATTR_SERVICE_VERSION]: version }),
        // Tells replicas apart.
        [ATTR_SERVICE_INSTANCE_ID]: randomUUID(),
        ...config.resourceAttributes,
        [ATTR_SERVICE_NAME]: config.serviceName,
      }),
    ),
    sampler: createSampler(config.sampler.name, config.sampler.ratio),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter,
        scheduledDelayMillis: config.batch.scheduledDelayMs,
        exportTimeoutMillis: config.batch.exportTimeoutMs,
        maxQueueSize: config.batch.maxQueueSize,
        maxExportBatchSize: config.batch.maxExportBatchSize,
      }),
    ],
  });
  const tracer = provider.getTracer(SCOPE, version);
  const contextManager = new AsyncLocalStorageContextManager().enable();
  const propagator = new W3CTraceContextPropagator();
  const restoreGlobals = registerGlobals(provider, contextManager, propagator, log);

  const requestOptions = new Map<string, SpanOptions>();
  /** Per method, fixed: the options object is reused (the SDK copies the attributes it is given). */
  function requestOptionsOf(method: string): SpanOptions {
    let options = requestOptions.get(method);
    if (options === undefined) {
      const known = KNOWN_METHODS.has(method);
      options = {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: known ? method : HTTP_REQUEST_METHOD_VALUE_OTHER,
          // The service speaks plain HTTP; TLS, if any, ends at a proxy in front of it.
          [ATTR_URL_SCHEME]: 'http',
          ...(known ? {} : { [ATTR_HTTP_REQUEST_METHOD_ORIGINAL]: method }),
        },
      };
      // Unknown methods are whatever a client sends: not kept.
      if (known) requestOptions.set(method, options);
    }
    return options;
  }

  const database = describeDatabase(databaseUrl);
  const databaseOptions = new Map<DatabaseOperation, { readonly name: string; readonly options: SpanOptions }>();
  function databaseSpanOf(operation: DatabaseOperation) {
    let described = databaseOptions.get(operation);
    if (described === undefined) {
      const { statement, table } = operation;
      described = {
        // Semantic conventions' `{db.operation.name} {db.collection.name}`.
        name: table === undefined ? statement : `${statement} ${table}`,
        options: {
          kind: SpanKind.CLIENT,
          attributes: {
            ...database,
            [ATTR_DB_OPERATION_NAME]: statement,
            ...(table === undefined ? {} : { [ATTR_DB_COLLECTION_NAME]: table }),
          },
        },
      };
      databaseOptions.set(operation, described);
    }
    return described;
  }

  return {
    startRequest(method, headers) {
      const parent = headers.traceparent === undefined ? ROOT_CONTEXT : extractParent(propagator, headers);
      return tracer.startSpan(KNOWN_METHODS.has(method) ? method : 'HTTP', requestOptionsOf(method), parent);
    },
    runInSpan(span, fn) {
      return contextManager.with(trace.setSpan(contextManager.active(), span), fn);
    },
    endRequest(span, method, route, status) {
      if (route !== UNMATCHED_ROUTE) {
        span.setAttribute(ATTR_HTTP_ROUTE, route);
        span.updateName(`${KNOWN_METHODS.has(method) ? method : 'HTTP'} ${route}`);
      }
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      // A 4xx is the client's doing, not a failure of this service.
      if (status >= 500) {
        span.setAttribute(ATTR_ERROR_TYPE, String(status));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    },
    activeTraceParent() {
      const span = trace.getSpan(contextManager.active());
      if (span === undefined) return undefined;
      const { traceId, spanId, traceFlags } = span.spanContext();
      return `00-${traceId}-${spanId}-${(traceFlags & TraceFlags.SAMPLED) === 0 ? '00' : '01'}`;
    },
    activeLogFields() {
      const span = trace.getSpan(contextManager.active());
      if (span === undefined) return undefined;
      const { traceId, spanId } = span.spanContext();
      return { trace_id: traceId, span_id: spanId };
    },
    databaseCalls: {
      start(operation) {
        // Only inside a request that is traced and sampled: no root spans for the dispatcher's
        // claims and records, which run outside any request, and nothing for a request that the
        // sampler left out. A span brackets a repository call as its caller sees it: for a
        // create, the group-commit wait for its row, that is the queue and then the one INSERT
        // its batch shares with the creates that arrived alongside (and, for a replay or a
        // conflict, the read of the stored row), not a statement of its own.
        const parent = trace.getSpan(contextManager.active());
        if (parent === undefined || !parent.isRecording()) return undefined;
        const { name, options } = databaseSpanOf(operation);
        return tracer.startSpan(name, options, contextManager.active());
      },
      end(span, outcome, error) {
        if (outcome === 'error') {
          // A domain refusal (a conflict) counts too: the call threw, as the metrics count it.
          span.setAttribute(ATTR_ERROR_TYPE, error instanceof Error ? error.name : ERROR_TYPE_VALUE_OTHER);
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end();
      },
    },
    deliveries: {
      start(claimed, headers) {
        const parent =
          claimed.traceParent === null ? ROOT_CONTEXT : extractParent(propagator, { traceparent: claimed.traceParent });
        const span = tracer.startSpan(
          'POST',
          { kind: SpanKind.CLIENT, attributes: deliveryAttributes(claimed) },
          parent,
        );
        // Beside the Standard Webhooks headers; the signature covers the body only, so adding a
        // header changes nothing for a receiver that verifies it.
        propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter);
        return span;
      },
      end(span, result) {
        endDeliverySpan(span, result);
      },
    },
    async shutdown() {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(resolve, SHUTDOWN_TIMEOUT_MS, 'timeout');
      });
      try {
        const outcome = await Promise.race([
          provider.shutdown().then(
            () => 'done' as const,
            (error: unknown) => ({ error }),
          ),
          timeout,
        ]);
        if (outcome === 'timeout') {
          log.warn({ timeoutMs: SHUTDOWN_TIMEOUT_MS }, 'traces not all exported at shutdown: the collector is slow');
        } else if (outcome !== 'done') {
          log.warn({ err: outcome.error }, 'traces not all exported at shutdown');
        }
      } finally {
        clearTimeout(timer);
        restoreGlobals();
        contextManager.disable();
      }
    },
  };
}

function createSampler(name: TracesSampler, ratio: number): Sampler {
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}

/** The context whose remote span the carrier's `traceparent` names; the root when it names none validly. */
function extractParent(propagator: W3CTraceContextPropagator, carrier: IncomingHttpHeaders): Context {
  return propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
}

/**
 * The attributes every database span carries: PostgreSQL (PGlite is PostgreSQL too) and, on a
 * server, its database and address as the connection string names them (never its credentials).
 */
function describeDatabase(databaseUrl: string | undefined): Attributes {
  const attributes: Attributes = { [ATTR_DB_SYSTEM_NAME]: DB_SYSTEM_NAME_VALUE_POSTGRESQL };
  if (databaseUrl === undefined) return attributes;
  try {
    const { client, hosts } = parsePostgresUrl(databaseUrl);
    if (client.database) attributes[ATTR_DB_NAMESPACE] = client.database;
    // With several hosts the server is whichever is primary at the time: none is named.
    const [only, ...others] = hosts;
    if (only !== undefined && others.length === 0) {
      if (only.host !== undefined) attributes[ATTR_SERVER_ADDRESS] = only.host;
      attributes[ATTR_SERVER_PORT] = only.port ?? 5432;
    }
  } catch {
    // A connection string the driver reads but this parser does not: the system name is enough.
  }
  return attributes;
}

function deliveryAttributes(claimed: ClaimedDelivery): Attributes {
  const attributes: Attributes = {
    [ATTR_HTTP_REQUEST_METHOD]: 'POST',
    // The subscription's URL as registered: no user or password (refused at registration); the
    // signing secret travels in no URL.
    [ATTR_URL_FULL]: claimed.url,
    [WEBHOOK_ATTRIBUTES.webhookId]: claimed.webhookId,
    [WEBHOOK_ATTRIBUTES.eventId]: claimed.eventId,
    [WEBHOOK_ATTRIBUTES.deliveryId]: claimed.deliveryId.toString(),
    [WEBHOOK_ATTRIBUTES.attempt]: claimed.attemptNumber,
  };
  if (claimed.attemptNumber > 1) attributes[ATTR_HTTP_REQUEST_RESEND_COUNT] = claimed.attemptNumber - 1;
  try {
    const url = new URL(claimed.url);
    attributes[ATTR_SERVER_ADDRESS] = url.hostname.replace(/^\[(.*)\]$/, '$1');
    attributes[ATTR_SERVER_PORT] = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  } catch {
    // postWebhook refuses it too, and says so in the attempt's error.
  }
  return attributes;
}

/**
 * An attempt is an error unless a 2xx came back: a 3xx too, unlike for a plain HTTP client,
 * since redirects are not followed and the delivery is retried.
 */
function endDeliverySpan(span: Span, { statusCode, error, errorType }: PostWebhookResult): void {
  if (statusCode !== null) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, statusCode);
  if (statusCode === null || statusCode < 200 || statusCode >= 300) {
    span.setAttribute(
      ATTR_ERROR_TYPE,
      statusCode !== null ? String(statusCode) : (errorType ?? ERROR_TYPE_VALUE_OTHER),
    );
    span.setStatus({ code: SpanStatusCode.ERROR, ...(error === null ? {} : { message: error }) });
  }
  span.end();
}

/** apps/api's package version (the same from src/ and dist/); undefined when it cannot be read. */
function readServiceVersion(): string | undefined {
  try {
    const manifest: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    const version =
      typeof manifest === 'object' && manifest !== null && 'version' in manifest ? manifest.version : undefined;
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Registers the tracer provider, context manager and propagator as the API's globals, and the
 * SDK's own diagnostics (failed exports, dropped spans) as warnings in the log, at most one a
 * minute. Returns what gives back exactly what it registered.
 */
function registerGlobals(
  provider: TracerProvider,
  contextManager: AsyncLocalStorageContextManager,
  propagator: W3CTraceContextPropagator,
  log: Logger,
): () => void {
  const registered = {
    tracerProvider: trace.setGlobalTracerProvider(provider),
    contextManager: context.setGlobalContextManager(contextManager),
    propagator: propagation.setGlobalPropagator(propagator),
    diag: diag.setLogger(createDiagLogger(log), { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true }),
  };
  return () => {
    if (registered.tracerProvider) trace.disable();
    if (registered.contextManager) context.disable();
    if (registered.propagator) propagation.disable();
    if (registered.diag) diag.disable();
  };
}

function createDiagLogger(log: Logger): DiagLogger {
  let lastWarned = Number.NEGATIVE_INFINITY;
  let suppressed = 0;
  const warn = (message: string, ...args: unknown[]) => {
    const now = performance.now();
    if (now - lastWarned < DIAG_WARN_INTERVAL_MS) {
      suppressed += 1;
      return;
    }
    const detail = args.map((arg) => (arg instanceof Error ? arg.message : String(arg))).join(' ');
    log.warn(
      { ...(detail === '' ? {} : { detail }), ...(suppressed > 0 ? { suppressed } : {}) },
      `tracing: ${message}`,
    );
    lastWarned = now;
    suppressed = 0;
  };
  const ignore = () => {};
  return { error: warn, warn, info: ignore, debug: ignore, verbose: ignore };
}
