import { DEFAULT_DATA_DIR, parsePostgresUrl } from '@plant-store/db';
import { TOKEN_RATE_LIMIT_MAX_REQUESTS, TOKEN_RATE_LIMIT_MAX_SECONDS } from '@plant-store/schema';
import * as v from 'valibot';
import { LOG_LEVELS, type LogLevel } from './logger.js';
import { parseRateLimitPolicy, type RateLimitPolicy } from './rate-limits/rate-limit-policy.js';
import {
  DEFAULT_SERVICE_NAME,
  OTLP_PROTOCOLS,
  parseKeyValueList,
  parseSamplerRatio,
  resolveTracesUrl,
  TRACES_SAMPLERS,
  type TracingConfig,
} from './tracing/tracing-config.js';
import type { WebhookDispatcherOptions } from './webhooks/dispatcher.js';
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from './webhooks/retry-schedule.js';
import { ALLOW_PRIVATE_NETWORKS_SETTING } from './webhooks/url-policy.js';

function integerVariable(name: string, min: number, max: number) {
  const message = `${name} must be an integer from ${min} to ${max}`;
  return v.pipe(
    v.string(),
    v.regex(/^\d+$/, message),
    v.transform(Number),
    v.minValue(min, message),
    v.maxValue(max, message),
  );
}

function booleanVariable(name: string, fallback: 'true' | 'false') {
  return v.optional(
    v.pipe(
      v.string(),
      v.picklist(['true', 'false'], `${name} must be true or false`),
      v.transform((value) => value === 'true'),
    ),
    fallback,
  );
}

/** A string variable that `parse` turns into a value, or an issue naming the variable and what is wrong. */
function parsedVariable<T>(name: string, parse: (text: string) => T) {
  return v.pipe(
    v.string(),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      try {
        return parse(dataset.value);
      } catch (error) {
        addIssue({ message: `${name} ${error instanceof Error ? error.message : String(error)}` });
        return NEVER;
      }
    }),
  );
}

function otlpProtocolVariable(name: string) {
  return v.optional(
    v.picklist(OTLP_PROTOCOLS, (issue) =>
      issue.input === 'grpc'
        ? `${name}=grpc is not supported: this service exports OTLP over HTTP; use http/protobuf (the default) or http/json`
        : `${name} must be http/protobuf or http/json`,
    ),
  );
}

const EnvSchema = v.object({
  PORT: v.optional(integerVariable('PORT', 0, 65535), '3000'),
  HOST: v.optional(v.pipe(v.string(), v.nonEmpty('HOST must not be empty')), '127.0.0.1'),
  // libpq's URL, several hosts and target_session_attrs included: read here so that a bad one stops
  // the start with its reason (the database layer reads it again).
  DATABASE_URL: v.optional(
    parsedVariable('DATABASE_URL', (text) => {
      parsePostgresUrl(text);
      return text;
    }),
  ),
  DATA_DIR: v.optional(v.pipe(v.string(), v.nonEmpty('DATA_DIR must not be empty')), DEFAULT_DATA_DIR),
  BODY_LIMIT_BYTES: v.optional(integerVariable('BODY_LIMIT_BYTES', 1, 16 * 1024 * 1024), '65536'),
  DATABASE_POOL_SIZE: v.optional(integerVariable('DATABASE_POOL_SIZE', 1, 1000), '16'),
  FEED_PAGE_CACHE_MB: v.optional(integerVariable('FEED_PAGE_CACHE_MB', 0, 4096), '32'),
  SHUTDOWN_TIMEOUT_MS: v.optional(integerVariable('SHUTDOWN_TIMEOUT_MS', 0, 600_000), '10000'),
  // Connections (see docs/configuration.md#connections): a cap well below a typical 65,536
  // descriptor limit, and timeouts that close what a client leaves half-sent or idle.
  MAX_CONNECTIONS: v.optional(integerVariable('MAX_CONNECTIONS', 1, 1_000_000), '10000'),
  HEADERS_TIMEOUT_MS: v.optional(integerVariable('HEADERS_TIMEOUT_MS', 1_000, 600_000), '10000'),
  REQUEST_TIMEOUT_MS: v.optional(integerVariable('REQUEST_TIMEOUT_MS', 1_000, 3_600_000), '30000'),
  KEEP_ALIVE_TIMEOUT_MS: v.optional(integerVariable('KEEP_ALIVE_TIMEOUT_MS', 1_000, 600_000), '5000'),
  NODE_ENV: v.optional(v.string(), 'development'),
  MIGRATE_ON_START: booleanVariable('MIGRATE_ON_START', 'true'),
  ALLOW_EMBEDDED_DATABASE: booleanVariable('ALLOW_EMBEDDED_DATABASE', 'false'),
  LOG_LEVEL: v.optional(
    v.pipe(v.string(), v.toLowerCase(), v.picklist(LOG_LEVELS, `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`)),
    'info',
  ),
  METRICS_ENABLED: booleanVariable('METRICS_ENABLED', 'true'),
  METRICS_PORT: v.optional(integerVariable('METRICS_PORT', 0, 65535)),
  // Unset: /metrics on the API port in development, nowhere in production (without METRICS_PORT).
  METRICS_ON_API_PORT: v.optional(
    v.pipe(
      v.string(),
      v.picklist(['true', 'false'], 'METRICS_ON_API_PORT must be true or false'),
      v.transform((value) => value === 'true'),
    ),
  ),
  WEBHOOKS_DISPATCH: booleanVariable('WEBHOOKS_DISPATCH', 'true'),
  [ALLOW_PRIVATE_NETWORKS_SETTING]: booleanVariable(ALLOW_PRIVATE_NETWORKS_SETTING, 'false'),
  WEBHOOKS_RETRY_SCHEDULE: v.optional(
    v.pipe(
      v.string(),
      v.rawTransform(({ dataset, addIssue, NEVER }) => {
        try {
          return parseRetrySchedule(dataset.value);
        } catch (error) {
          addIssue({ message: `WEBHOOKS_RETRY_SCHEDULE: ${error instanceof Error ? error.message : String(error)}` });
          return NEVER;
        }
      }),
    ),
    DEFAULT_RETRY_SCHEDULE,
  ),
  WEBHOOKS_TIMEOUT_MS: v.optional(integerVariable('WEBHOOKS_TIMEOUT_MS', 100, 60_000), '10000'),
  WEBHOOKS_POLL_MS: v.optional(integerVariable('WEBHOOKS_POLL_MS', 10, 60_000), '1000'),
  WEBHOOKS_LEASE_MS: v.optional(integerVariable('WEBHOOKS_LEASE_MS', 1_000, 3_600_000), '60000'),
  WEBHOOKS_CONCURRENCY: v.optional(integerVariable('WEBHOOKS_CONCURRENCY', 1, 1_000), '16'),
  WEBHOOKS_RETENTION_DAYS: v.optional(integerVariable('WEBHOOKS_RETENTION_DAYS', 0, 36_500), '30'),
  // Days (a decimal: tests use seconds' worth) of nothing but failed attempts before a subscription is disabled; 0: never.
  WEBHOOKS_DISABLE_AFTER_DAYS: v.optional(
    v.pipe(
      v.string(),
      v.regex(
        /^\d{1,5}(?:\.\d{1,9})?$/,
        'WEBHOOKS_DISABLE_AFTER_DAYS must be a number of days from 0 to 36500 (0: never)',
      ),
      v.transform(Number),
      v.maxValue(36_500, 'WEBHOOKS_DISABLE_AFTER_DAYS must be a number of days from 0 to 36500 (0: never)'),
    ),
    '5',
  ),
  WEBHOOKS_PER_RECEIVER_CONCURRENCY: v.optional(integerVariable('WEBHOOKS_PER_RECEIVER_CONCURRENCY', 1, 1_000), '4'),
  // One team's share of the slots, all its receivers together (unset: half of WEBHOOKS_CONCURRENCY).
  WEBHOOKS_PER_TEAM_CONCURRENCY: v.optional(integerVariable('WEBHOOKS_PER_TEAM_CONCURRENCY', 1, 1_000)),
  // Requests in flight in this process from which deliveries give way to them (0: never), and the
  // deliveries in flight meanwhile (one per receiver).
  WEBHOOKS_BUSY_REQUESTS: v.optional(integerVariable('WEBHOOKS_BUSY_REQUESTS', 0, 100_000), '16'),
  WEBHOOKS_BUSY_CONCURRENCY: v.optional(integerVariable('WEBHOOKS_BUSY_CONCURRENCY', 1, 1_000), '4'),
  // Tokens (see docs/tokens.md): how often each process writes the last-use times it collected.
  TOKEN_LAST_USED_FLUSH_SECONDS: v.optional(integerVariable('TOKEN_LAST_USED_FLUSH_SECONDS', 1, 3_600), '60'),
  // Rate limits (see docs/tokens.md#rate-limits): the limit of a token without one of its own, and
  // where the counts are shared.
  TOKEN_RATE_LIMIT: v.optional(
    parsedVariable('TOKEN_RATE_LIMIT', (text) =>
      text === 'off'
        ? null
        : parseRateLimitPolicy(text, {
            requests: TOKEN_RATE_LIMIT_MAX_REQUESTS,
            perSeconds: TOKEN_RATE_LIMIT_MAX_SECONDS,
          }),
    ),
    '1000/10',
  ),
  REDIS_URL: v.optional(
    v.pipe(v.string(), v.regex(/^rediss?:\/\/\S+$/, 'REDIS_URL must be a redis:// or rediss:// URL')),
  ),
  // Failed authentications per client address (see docs/tokens.md#failed-authentications).
  AUTH_FAILURE_LIMIT: v.optional(
    parsedVariable('AUTH_FAILURE_LIMIT', (text) =>
      text === 'off' ? null : parseRateLimitPolicy(text, { requests: 1_000_000, perSeconds: 86_400 }),
    ),
    '20/60',
  ),
  TRUST_PROXY_HOPS: v.optional(integerVariable('TRUST_PROXY_HOPS', 0, 10), '0'),
  // Teams (see docs/tokens.md#teams): caps per team, and what a team's tokens:manage token may grant.
  TOKENS_PER_TEAM_LIMIT: v.optional(integerVariable('TOKENS_PER_TEAM_LIMIT', 1, 100_000), '100'),
  WEBHOOKS_PER_TEAM_LIMIT: v.optional(integerVariable('WEBHOOKS_PER_TEAM_LIMIT', 1, 10_000), '100'),
  TOKEN_MAX_LIFETIME_DAYS: v.optional(
    v.union(
      [v.literal('off'), integerVariable('TOKEN_MAX_LIFETIME_DAYS', 1, 36_500)],
      'TOKEN_MAX_LIFETIME_DAYS must be off or an integer from 1 to 36500',
    ),
    '365',
  ),
  TOKEN_MAX_RATE_LIMIT: v.optional(
    parsedVariable('TOKEN_MAX_RATE_LIMIT', (text) =>
      text === 'off'
        ? null
        : parseRateLimitPolicy(text, {
            requests: TOKEN_RATE_LIMIT_MAX_REQUESTS,
            perSeconds: TOKEN_RATE_LIMIT_MAX_SECONDS,
          }),
    ),
    '10000/10',
  ),
  // The audit log: days its events are kept (0: for ever).
  AUDIT_RETENTION_DAYS: v.optional(integerVariable('AUDIT_RETENTION_DAYS', 0, 36_500), '365'),
  REDIS_KEY_PREFIX: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^[A-Za-z0-9:._-]{1,64}$/, 'REDIS_KEY_PREFIX must be 1-64 letters, digits, ":", ".", "_" or "-"'),
    ),
    'plant-store',
  ),
  // Traces: the standard OpenTelemetry variables (see docs/operations.md#traces).
  OTEL_SDK_DISABLED: booleanVariable('OTEL_SDK_DISABLED', 'false'),
  OTEL_TRACES_EXPORTER: v.optional(
    v.pipe(v.string(), v.picklist(['otlp', 'none'], 'OTEL_TRACES_EXPORTER must be otlp or none')),
    'otlp',
  ),
  OTEL_EXPORTER_OTLP_ENDPOINT: v.optional(
    parsedVariable('OTEL_EXPORTER_OTLP_ENDPOINT', (text) => resolveTracesUrl(text, false)),
  ),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: v.optional(
    parsedVariable('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', (text) => resolveTracesUrl(text, true)),
  ),
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocolVariable('OTEL_EXPORTER_OTLP_PROTOCOL'),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocolVariable('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'),
  OTEL_EXPORTER_OTLP_HEADERS: v.optional(parsedVariable('OTEL_EXPORTER_OTLP_HEADERS', parseKeyValueList), ''),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: v.optional(
    parsedVariable('OTEL_EXPORTER_OTLP_TRACES_HEADERS', parseKeyValueList),
    '',
  ),
  OTEL_EXPORTER_OTLP_TIMEOUT: v.optional(integerVariable('OTEL_EXPORTER_OTLP_TIMEOUT', 1, 600_000), '10000'),
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: v.optional(integerVariable('OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', 1, 600_000)),
  OTEL_EXPORTER_OTLP_COMPRESSION: v.optional(
    v.picklist(['gzip', 'none'], 'OTEL_EXPORTER_OTLP_COMPRESSION must be gzip or none'),
    'none',
  ),
  OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: v.optional(
    v.picklist(['gzip', 'none'], 'OTEL_EXPORTER_OTLP_TRACES_COMPRESSION must be gzip or none'),
  ),
  OTEL_TRACES_SAMPLER: v.optional(
    v.picklist(TRACES_SAMPLERS, `OTEL_TRACES_SAMPLER must be one of ${TRACES_SAMPLERS.join(', ')}`),
    'parentbased_always_on',
  ),
  OTEL_TRACES_SAMPLER_ARG: v.optional(parsedVariable('OTEL_TRACES_SAMPLER_ARG', parseSamplerRatio)),
  OTEL_BSP_SCHEDULE_DELAY: v.optional(integerVariable('OTEL_BSP_SCHEDULE_DELAY', 0, 3_600_000), '5000'),
  OTEL_BSP_EXPORT_TIMEOUT: v.optional(integerVariable('OTEL_BSP_EXPORT_TIMEOUT', 1, 600_000), '30000'),
  OTEL_BSP_MAX_QUEUE_SIZE: v.optional(integerVariable('OTEL_BSP_MAX_QUEUE_SIZE', 1, 1_000_000), '2048'),
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: v.optional(integerVariable('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 1, 1_000_000), '512'),
  OTEL_SERVICE_NAME: v.optional(v.string()),
  OTEL_RESOURCE_ATTRIBUTES: v.optional(parsedVariable('OTEL_RESOURCE_ATTRIBUTES', parseKeyValueList), ''),
});

/** Every environment variable the service reads (the env example and the README list them all). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(EnvSchema.entries);

/** Limits on the HTTP connections of the API's port (the metrics port has its own, small ones). */
export interface ConnectionsConfig {
  /**
   * Open connections at most; at the cap a new connection closes the longest-waiting one of the
   * address holding the most (see guardConnections), or is closed itself when every one is busy.
   */
  readonly max: number;
  /** A request's headers must have arrived this long after its first byte. */
  readonly headersTimeoutMs: number;
  /** A whole request (headers and body) must have arrived this long after its first byte. */
  readonly requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long. */
  readonly keepAliveTimeoutMs: number;
}

export interface Config {
  readonly port: number;
  readonly host: string;
  /** PostgreSQL connection string; absent means the embedded database in `dataDir`. */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly bodyLimitBytes: number;
  readonly databasePoolSize: number;
  /** Full pages of the event feed kept in memory, in bytes (see createFeedPageCache); 0 keeps none. */
  readonly feedPageCacheBytes: number;
  readonly shutdownTimeoutMs: number;
  readonly connections: ConnectionsConfig;
  readonly production: boolean;
  /**
   * Whether opening the database applies pending migrations (serve and the token command).
   * False: a database that is not up to date stops the start; `plant-store migrate` applies them.
   */
  readonly migrateOnStart: boolean;
  readonly logLevel: LogLevel;
  /**
   * Where `GET /metrics` is served: `{ port }` on a listener of its own (METRICS_PORT, same HOST);
   * `'app'` on the API's own port (without METRICS_PORT, in development or with
   * METRICS_ON_API_PORT=true); `'off'` nowhere, and nothing is measured (METRICS_ENABLED=false,
   * or production without METRICS_PORT: the API port is the public one).
   */
  readonly metrics: 'off' | 'app' | { readonly port: number };
  readonly webhooks: WebhooksConfig;
  readonly tokens: TokensConfig;
  readonly teams: TeamsConfig;
  /** Audit events older than this many days are deleted; 0 keeps them. */
  readonly auditRetentionDays: number;
  /** OpenTelemetry traces: on only when an OTLP endpoint is set (see TracingConfig). */
  readonly tracing: TracingConfig;
}

/**
 * The webhook settings: whether this process delivers events, which receivers may be registered
 * and called, and how deliveries go (see WebhookDispatcherOptions for each).
 */
export interface WebhooksConfig
  extends Pick<
    WebhookDispatcherOptions,
    | 'retryScheduleMs'
    | 'timeoutMs'
    | 'pollMs'
    | 'leaseMs'
    | 'concurrency'
    | 'perWebhookConcurrency'
    | 'perReceiverConcurrency'
    | 'perTeamConcurrency'
    | 'busyConcurrency'
  > {
  /** Whether this process delivers events (every replica may; leases keep them apart). */
  readonly dispatch: boolean;
  /**
   * Requests in flight in this process from which it counts as busy, and deliveries give way
   * (`busyConcurrency` in flight); 0: never.
   */
  readonly busyRequests: number;
  /** Allow receivers in private, loopback and link-local ranges (tests, internal networks). */
  readonly allowPrivateNetworks: boolean;
  /** Finished deliveries and events older than this many days are deleted; 0 keeps them. */
  readonly retentionDays: number;
  /** A subscription whose every attempt failed for this many days is disabled; 0: never. */
  readonly disableAfterDays: number;
}

/** Bearer tokens: how their use is recorded, and how they are limited. */
export interface TokensConfig {
  /** How often this process writes the last-use times it collected: the precision of `lastUsedAt`. */
  readonly lastUsedFlushMs: number;
  /** The limit of a token without one of its own; null (`off`): such tokens are not limited. */
  readonly defaultRateLimit: RateLimitPolicy | null;
  /** Where the counts are shared by every replica; absent: each process counts alone. */
  readonly redis?: { readonly url: string; readonly keyPrefix: string };
  /**
   * Failed authentications an address may have per window before tokens this process has not seen
   * authenticate are refused from it (429) without a lookup; null (`off`): no limit.
   */
  readonly authFailureLimit: RateLimitPolicy | null;
  /** Proxies in front whose X-Forwarded-For entries name the client (0: the peer is the client). */
  readonly trustedProxyHops: number;
}

/** The walls between teams: caps per team, and what a team's token may grant another. */
export interface TeamsConfig {
  /** Most active tokens one team may hold (issued over HTTP). */
  readonly tokensPerTeam: number;
  /** Most webhook subscriptions one team may hold. */
  readonly webhooksPerTeam: number;
  /** The longest lifetime a team may grant a token, in days; null (`off`): any. */
  readonly maxTokenLifetimeDays: number | null;
  /** The largest rate limit a team may grant a token; null (`off`): any. */
  readonly maxTokenRateLimit: RateLimitPolicy | null;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Reads the environment once; throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable means "not set", as it does for most tools.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const result = v.safeParse(EnvSchema, present);
  if (!result.success) {
    const problems = result.issues.map((issue) => issue.message).join('; ');
    throw new ConfigError(`invalid configuration: ${problems}`);
  }
  const parsed = result.output;
  const production = parsed.NODE_ENV === 'production';
  // Production on a folder inside one container or machine, by accident, would lose data with it
  // and refuse a second replica: it must be asked for.
  if (production && parsed.DATABASE_URL === undefined && !parsed.ALLOW_EMBEDDED_DATABASE) {
    throw new ConfigError(
      'invalid configuration: NODE_ENV=production needs DATABASE_URL (a postgres:// connection string); ' +
        'to run production on the embedded database in DATA_DIR (one process only), set ALLOW_EMBEDDED_DATABASE=true',
    );
  }
  if (parsed.HEADERS_TIMEOUT_MS > parsed.REQUEST_TIMEOUT_MS) {
    throw new ConfigError('invalid configuration: HEADERS_TIMEOUT_MS must be at most REQUEST_TIMEOUT_MS');
  }
  if (parsed.METRICS_PORT !== undefined && parsed.METRICS_PORT !== 0 && parsed.METRICS_PORT === parsed.PORT) {
    throw new ConfigError('invalid configuration: METRICS_PORT must differ from PORT');
  }
  if (parsed.METRICS_PORT !== undefined && parsed.METRICS_ON_API_PORT === true) {
    throw new ConfigError(
      'invalid configuration: METRICS_ON_API_PORT=true and METRICS_PORT both say where /metrics goes; set one',
    );
  }
  // A delivery must finish (or time out) well before its lease ends, or another replica would
  // start a second one while the first is still running.
  if (parsed.WEBHOOKS_LEASE_MS < 2 * parsed.WEBHOOKS_TIMEOUT_MS) {
    throw new ConfigError('invalid configuration: WEBHOOKS_LEASE_MS must be at least twice WEBHOOKS_TIMEOUT_MS');
  }
  return {
    tracing: tracingConfig(parsed),
    port: parsed.PORT,
    host: parsed.HOST,
    databaseUrl: parsed.DATABASE_URL,
    dataDir: parsed.DATA_DIR,
    bodyLimitBytes: parsed.BODY_LIMIT_BYTES,
    databasePoolSize: parsed.DATABASE_POOL_SIZE,
    feedPageCacheBytes: parsed.FEED_PAGE_CACHE_MB * 1024 * 1024,
    shutdownTimeoutMs: parsed.SHUTDOWN_TIMEOUT_MS,
    connections: {
      max: parsed.MAX_CONNECTIONS,
      headersTimeoutMs: parsed.HEADERS_TIMEOUT_MS,
      requestTimeoutMs: parsed.REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: parsed.KEEP_ALIVE_TIMEOUT_MS,
    },
    production,
    migrateOnStart: parsed.MIGRATE_ON_START,
    logLevel: parsed.LOG_LEVEL,
    metrics: !parsed.METRICS_ENABLED
      ? 'off'
      : parsed.METRICS_PORT !== undefined
        ? { port: parsed.METRICS_PORT }
        : // It lists every token by name: never public unless asked for.
          (parsed.METRICS_ON_API_PORT ?? !production)
          ? 'app'
          : 'off',
    webhooks: {
      dispatch: parsed.WEBHOOKS_DISPATCH,
      allowPrivateNetworks: parsed.WEBHOOKS_ALLOW_PRIVATE_NETWORKS,
      retentionDays: parsed.WEBHOOKS_RETENTION_DAYS,
      disableAfterDays: parsed.WEBHOOKS_DISABLE_AFTER_DAYS,
      retryScheduleMs: parsed.WEBHOOKS_RETRY_SCHEDULE,
      timeoutMs: parsed.WEBHOOKS_TIMEOUT_MS,
      pollMs: parsed.WEBHOOKS_POLL_MS,
      leaseMs: parsed.WEBHOOKS_LEASE_MS,
      concurrency: parsed.WEBHOOKS_CONCURRENCY,
      // One receiver's share of the slots, whatever the number of its subscriptions.
      perWebhookConcurrency: parsed.WEBHOOKS_PER_RECEIVER_CONCURRENCY,
      perReceiverConcurrency: parsed.WEBHOOKS_PER_RECEIVER_CONCURRENCY,
      busyRequests: parsed.WEBHOOKS_BUSY_REQUESTS,
      busyConcurrency: parsed.WEBHOOKS_BUSY_CONCURRENCY,
      // One team's share, all its receivers together: the others keep the rest.
      perTeamConcurrency: parsed.WEBHOOKS_PER_TEAM_CONCURRENCY ?? Math.ceil(parsed.WEBHOOKS_CONCURRENCY / 2),
    },
    teams: {
      tokensPerTeam: parsed.TOKENS_PER_TEAM_LIMIT,
      webhooksPerTeam: parsed.WEBHOOKS_PER_TEAM_LIMIT,
      maxTokenLifetimeDays: parsed.TOKEN_MAX_LIFETIME_DAYS === 'off' ? null : parsed.TOKEN_MAX_LIFETIME_DAYS,
      maxTokenRateLimit: parsed.TOKEN_MAX_RATE_LIMIT,
    },
    auditRetentionDays: parsed.AUDIT_RETENTION_DAYS,
    tokens: {
      lastUsedFlushMs: parsed.TOKEN_LAST_USED_FLUSH_SECONDS * 1000,
      defaultRateLimit: parsed.TOKEN_RATE_LIMIT,
      authFailureLimit: parsed.AUTH_FAILURE_LIMIT,
      trustedProxyHops: parsed.TRUST_PROXY_HOPS,
      ...(parsed.REDIS_URL === undefined
        ? {}
        : { redis: { url: parsed.REDIS_URL, keyPrefix: parsed.REDIS_KEY_PREFIX } }),
    },
  };
}

/**
 * Traces are exported only when an OTLP endpoint is set, unless OTEL_SDK_DISABLED=true or
 * OTEL_TRACES_EXPORTER=none say otherwise; the signal-specific variables win over the generic
 * ones, as the OpenTelemetry specification says.
 */
function tracingConfig(parsed: v.InferOutput<typeof EnvSchema>): TracingConfig {
  const url = parsed.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? parsed.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (url === undefined || parsed.OTEL_SDK_DISABLED || parsed.OTEL_TRACES_EXPORTER === 'none')
    return { enabled: false };
  const batch = {
    scheduledDelayMs: parsed.OTEL_BSP_SCHEDULE_DELAY,
    exportTimeoutMs: parsed.OTEL_BSP_EXPORT_TIMEOUT,
    maxQueueSize: parsed.OTEL_BSP_MAX_QUEUE_SIZE,
    maxExportBatchSize: parsed.OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
  };
  if (batch.maxExportBatchSize > batch.maxQueueSize) {
    throw new ConfigError(
      'invalid configuration: OTEL_BSP_MAX_EXPORT_BATCH_SIZE must be at most OTEL_BSP_MAX_QUEUE_SIZE',
    );
  }
  const { 'service.name': namedInAttributes, ...resourceAttributes } = parsed.OTEL_RESOURCE_ATTRIBUTES;
  return {
    enabled: true,
    exporter: {
      protocol: parsed.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? parsed.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
      url,
      headers: { ...parsed.OTEL_EXPORTER_OTLP_HEADERS, ...parsed.OTEL_EXPORTER_OTLP_TRACES_HEADERS },
      timeoutMs: parsed.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? parsed.OTEL_EXPORTER_OTLP_TIMEOUT,
      compression: parsed.OTEL_EXPORTER_OTLP_TRACES_COMPRESSION ?? parsed.OTEL_EXPORTER_OTLP_COMPRESSION,
    },
    sampler: { name: parsed.OTEL_TRACES_SAMPLER, ratio: parsed.OTEL_TRACES_SAMPLER_ARG ?? 1 },
    batch,
    serviceName: parsed.OTEL_SERVICE_NAME ?? namedInAttributes ?? DEFAULT_SERVICE_NAME,
    resourceAttributes,
  };
}
