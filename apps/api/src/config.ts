import { DEFAULT_DATA_DIR } from '@plant-store/db';
import * as v from 'valibot';
import { LOG_LEVELS, type LogLevel } from './logger.js';
import type { WebhookDispatcherOptions } from './webhooks/dispatcher.js';
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from './webhooks/retry-schedule.js';

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

/** How many deliveries one process has in flight to one receiver at most. */
const WEBHOOK_PER_RECEIVER_CONCURRENCY = 4;

const EnvSchema = v.object({
  PORT: v.optional(integerVariable('PORT', 0, 65535), '3000'),
  HOST: v.optional(v.pipe(v.string(), v.nonEmpty('HOST must not be empty')), '127.0.0.1'),
  DATABASE_URL: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^postgres(ql)?:\/\//, 'DATABASE_URL must be a postgres:// or postgresql:// connection string'),
    ),
  ),
  DATA_DIR: v.optional(v.pipe(v.string(), v.nonEmpty('DATA_DIR must not be empty')), DEFAULT_DATA_DIR),
  BODY_LIMIT_BYTES: v.optional(integerVariable('BODY_LIMIT_BYTES', 1, 16 * 1024 * 1024), '65536'),
  DATABASE_POOL_SIZE: v.optional(integerVariable('DATABASE_POOL_SIZE', 1, 1000), '16'),
  SHUTDOWN_TIMEOUT_MS: v.optional(integerVariable('SHUTDOWN_TIMEOUT_MS', 0, 600_000), '10000'),
  NODE_ENV: v.optional(v.string(), 'development'),
  MIGRATE_ON_START: booleanVariable('MIGRATE_ON_START', 'true'),
  ALLOW_EMBEDDED_DATABASE: booleanVariable('ALLOW_EMBEDDED_DATABASE', 'false'),
  LOG_LEVEL: v.optional(
    v.pipe(v.string(), v.toLowerCase(), v.picklist(LOG_LEVELS, `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`)),
    'info',
  ),
  METRICS_ENABLED: booleanVariable('METRICS_ENABLED', 'true'),
  METRICS_PORT: v.optional(integerVariable('METRICS_PORT', 0, 65535)),
  WEBHOOKS_DISPATCH: booleanVariable('WEBHOOKS_DISPATCH', 'true'),
  WEBHOOKS_ALLOW_PRIVATE_NETWORKS: booleanVariable('WEBHOOKS_ALLOW_PRIVATE_NETWORKS', 'false'),
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
});

/** Every environment variable the service reads (the env example and the README list them all). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(EnvSchema.entries);

export interface Config {
  readonly port: number;
  readonly host: string;
  /** PostgreSQL connection string; absent means the embedded database in `dataDir`. */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly bodyLimitBytes: number;
  readonly databasePoolSize: number;
  readonly shutdownTimeoutMs: number;
  readonly production: boolean;
  /**
   * Whether opening the database applies pending migrations (serve and the token command).
   * False: a database that is not up to date stops the start; `plant-store migrate` applies them.
   */
  readonly migrateOnStart: boolean;
  readonly logLevel: LogLevel;
  /**
   * Where `GET /metrics` is served: `'app'` on the API's own port (METRICS_PORT unset),
   * `{ port }` on a listener of its own (same HOST), `'off'` nowhere, and nothing is measured.
   */
  readonly metrics: 'off' | 'app' | { readonly port: number };
  readonly webhooks: WebhooksConfig;
}

/**
 * The webhook settings: whether this process delivers events, which receivers may be registered
 * and called, and how deliveries go (see WebhookDispatcherOptions for each).
 */
export interface WebhooksConfig
  extends Pick<
    WebhookDispatcherOptions,
    'retryScheduleMs' | 'timeoutMs' | 'pollMs' | 'leaseMs' | 'concurrency' | 'perWebhookConcurrency'
  > {
  /** Whether this process delivers events (every replica may; leases keep them apart). */
  readonly dispatch: boolean;
  /** Allow receivers in private, loopback and link-local ranges (tests, internal networks). */
  readonly allowPrivateNetworks: boolean;
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
  if (parsed.METRICS_PORT !== undefined && parsed.METRICS_PORT !== 0 && parsed.METRICS_PORT === parsed.PORT) {
    throw new ConfigError('invalid configuration: METRICS_PORT must differ from PORT');
  }
  // A delivery must finish (or time out) well before its lease ends, or another replica would
  // start a second one while the first is still running.
  if (parsed.WEBHOOKS_LEASE_MS < 2 * parsed.WEBHOOKS_TIMEOUT_MS) {
    throw new ConfigError('invalid configuration: WEBHOOKS_LEASE_MS must be at least twice WEBHOOKS_TIMEOUT_MS');
  }
  return {
    port: parsed.PORT,
    host: parsed.HOST,
    databaseUrl: parsed.DATABASE_URL,
    dataDir: parsed.DATA_DIR,
    bodyLimitBytes: parsed.BODY_LIMIT_BYTES,
    databasePoolSize: parsed.DATABASE_POOL_SIZE,
    shutdownTimeoutMs: parsed.SHUTDOWN_TIMEOUT_MS,
    production,
    migrateOnStart: parsed.MIGRATE_ON_START,
    logLevel: parsed.LOG_LEVEL,
    metrics: !parsed.METRICS_ENABLED
      ? 'off'
      : parsed.METRICS_PORT === undefined
        ? 'app'
        : { port: parsed.METRICS_PORT },
    webhooks: {
      dispatch: parsed.WEBHOOKS_DISPATCH,
      allowPrivateNetworks: parsed.WEBHOOKS_ALLOW_PRIVATE_NETWORKS,
      retryScheduleMs: parsed.WEBHOOKS_RETRY_SCHEDULE,
      timeoutMs: parsed.WEBHOOKS_TIMEOUT_MS,
      pollMs: parsed.WEBHOOKS_POLL_MS,
      leaseMs: parsed.WEBHOOKS_LEASE_MS,
      concurrency: parsed.WEBHOOKS_CONCURRENCY,
      perWebhookConcurrency: WEBHOOK_PER_RECEIVER_CONCURRENCY,
    },
  };
}
