/**
 * What the standard OTEL_* variables say about traces, as config.ts reads them: no OpenTelemetry
 * module is imported here, so that a service with tracing off loads none.
 */

/** The OTLP encodings this service exports; `grpc` is refused (it would need a gRPC stack). */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** OTEL_TRACES_SAMPLER values this service honours (the spec's, less the vendor-specific ones). */
export const TRACES_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type TracesSampler = (typeof TRACES_SAMPLERS)[number];

/** Tracing is off (no endpoint, OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none), or on: */
export type TracingConfig = { readonly enabled: false } | TracingOn;

export interface TracingOn {
  readonly enabled: true;
  readonly exporter: OtlpExporterConfig;
  readonly sampler: { readonly name: TracesSampler /** For the ratio samplers: [0, 1]. */; readonly ratio: number };
  /** The batch span processor's settings (OTEL_BSP_*). */
  readonly batch: BatchConfig;
  /** OTEL_SERVICE_NAME, else `service.name` in OTEL_RESOURCE_ATTRIBUTES, else plant-store. */
  readonly serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES, decoded (service.name taken out). */
  readonly resourceAttributes: Readonly<Record<string, string>>;
}

export interface OtlpExporterConfig {
  readonly protocol: OtlpProtocol;
  /** Where spans are POSTed: the traces endpoint as given, or the generic one with `v1/traces` appended. */
  readonly url: string;
  /** OTEL_EXPORTER_OTLP_HEADERS, then OTEL_EXPORTER_OTLP_TRACES_HEADERS over them: may hold credentials. */
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly compression: 'gzip' | 'none';
}

export interface BatchConfig {
  readonly scheduledDelayMs: number;
  readonly exportTimeoutMs: number;
  readonly maxQueueSize: number;
  readonly maxExportBatchSize: number;
}

/** The service's name in traces unless the environment names it otherwise. */
export const DEFAULT_SERVICE_NAME = 'plant-store';

/**
 * The spec's `key1=value1,key2=value2` list (OTEL_EXPORTER_OTLP_HEADERS, OTEL_RESOURCE_ATTRIBUTES):
 * keys and values trimmed, values percent-decoded. Throws an Error saying what is wrong, never
 * quoting a value (a header may be a credential).
 */
export function parseKeyValueList(text: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const entry of text.split(',')) {
    if (entry.trim() === '') continue;
    const equals = entry.indexOf('=');
    const key = equals === -1 ? '' : entry.slice(0, equals).trim();
    if (key === '') throw new Error('must be a comma-separated list of key=value pairs');
    try {
      pairs[key] = decodeURIComponent(entry.slice(equals + 1).trim());
    } catch {
      throw new Error(`has a value for "${key}" that is not valid percent-encoding`);
    }
  }
  return pairs;
}

/**
 * The URL spans go to, as the OTLP exporter spec says: the traces endpoint as given, else the
 * generic endpoint with `v1/traces` appended to its path. Throws unless it is an http(s) URL.
 */
export function resolveTracesUrl(endpoint: string, signalSpecific: boolean): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new Error('must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('must be an http:// or https:// URL');
  if (signalSpecific) return url.toString();
  if (!url.pathname.endsWith('/')) url.pathname = `${url.pathname}/`;
  url.pathname = `${url.pathname}v1/traces`;
  return url.toString();
}

/** A sampler ratio: a decimal number from 0 to 1. Throws otherwise. */
export function parseSamplerRatio(text: string): number {
  const ratio = Number(text);
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(text.trim()) || !(ratio >= 0 && ratio <= 1)) {
    throw new Error('must be a number from 0 to 1');
  }
  return ratio;
}
