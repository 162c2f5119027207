import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, ConfigError, loadConfig } from './config.js';

describe('loadConfig: logs and metrics', () => {
  it('defaults to LOG_LEVEL info and metrics on the API port', () => {
    expect(loadConfig({})).toMatchObject({ logLevel: 'info', metrics: 'app' });
  });

  it('reads LOG_LEVEL in any case, and refuses an unknown level naming the variable and the choices', () => {
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) {
      expect(loadConfig({ LOG_LEVEL: level }).logLevel).toBe(level);
    }
    expect(loadConfig({ LOG_LEVEL: 'DEBUG' }).logLevel).toBe('debug');
    expect(loadConfig({ LOG_LEVEL: '' }).logLevel).toBe('info');
    expect(() => loadConfig({ LOG_LEVEL: 'verbose' })).toThrow(ConfigError);
    expect(() => loadConfig({ LOG_LEVEL: 'verbose' })).toThrow(
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    );
  });

  it('turns metrics off, or moves them to their own port', () => {
    expect(loadConfig({ METRICS_ENABLED: 'false' }).metrics).toBe('off');
    expect(loadConfig({ METRICS_ENABLED: 'true' }).metrics).toBe('app');
    expect(loadConfig({ METRICS_PORT: '9464' }).metrics).toEqual({ port: 9464 });
    expect(loadConfig({ METRICS_PORT: '0', PORT: '0' }).metrics).toEqual({ port: 0 });
    // Off wins over a port: one switch turns them off wherever they would be served.
    expect(loadConfig({ METRICS_ENABLED: 'false', METRICS_PORT: '9464' }).metrics).toBe('off');
  });

  it('serves /metrics on the API port in production only when asked to, and nowhere without METRICS_PORT', () => {
    const production = { NODE_ENV: 'production', DATABASE_URL: 'postgres://db.example/plants' };
    expect(loadConfig(production).metrics).toBe('off');
    expect(loadConfig({ ...production, METRICS_PORT: '9464' }).metrics).toEqual({ port: 9464 });
    expect(loadConfig({ ...production, METRICS_ON_API_PORT: 'true' }).metrics).toBe('app');
    expect(loadConfig({ ...production, METRICS_ON_API_PORT: 'false' }).metrics).toBe('off');
    // Development keeps it on the API port unless told otherwise.
    expect(loadConfig({ METRICS_ON_API_PORT: 'false' }).metrics).toBe('off');
    expect(loadConfig({ METRICS_ON_API_PORT: 'true' }).metrics).toBe('app');
    expect(loadConfig({ METRICS_ON_API_PORT: 'false', METRICS_PORT: '9464' }).metrics).toEqual({ port: 9464 });
  });

  it('refuses bad metrics settings with a message naming them', () => {
    expect(() => loadConfig({ METRICS_ON_API_PORT: 'yes' })).toThrow('METRICS_ON_API_PORT must be true or false');
    expect(() => loadConfig({ METRICS_ON_API_PORT: 'true', METRICS_PORT: '9464' })).toThrow(
      'METRICS_ON_API_PORT=true and METRICS_PORT both say where /metrics goes; set one',
    );
    expect(() => loadConfig({ METRICS_ENABLED: 'yes' })).toThrow('METRICS_ENABLED must be true or false');
    expect(() => loadConfig({ METRICS_PORT: '70000' })).toThrow('METRICS_PORT must be an integer from 0 to 65535');
    expect(() => loadConfig({ METRICS_PORT: '3000' })).toThrow('METRICS_PORT must differ from PORT');
    expect(() => loadConfig({ PORT: '8080', METRICS_PORT: '8080' })).toThrow('METRICS_PORT must differ from PORT');
  });
});

describe('loadConfig: webhooks', () => {
  it('dispatches, refuses private networks and retries on the default schedule unless told otherwise', () => {
    expect(loadConfig({}).webhooks).toEqual({
      dispatch: true,
      allowPrivateNetworks: false,
      retentionDays: 30,
      disableAfterDays: 5,
      retryScheduleMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
      timeoutMs: 10_000,
      pollMs: 1_000,
      leaseMs: 60_000,
      concurrency: 16,
      perWebhookConcurrency: 4,
      perReceiverConcurrency: 4,
      perTeamConcurrency: 8,
      busyRequests: 16,
      busyConcurrency: 4,
    });
  });

  it('reads every setting', () => {
    const webhooks = loadConfig({
      WEBHOOKS_DISPATCH: 'false',
      WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOKS_RETRY_SCHEDULE: '100ms,1s',
      WEBHOOKS_TIMEOUT_MS: '2000',
      WEBHOOKS_POLL_MS: '50',
      WEBHOOKS_LEASE_MS: '5000',
      WEBHOOKS_CONCURRENCY: '8',
      WEBHOOKS_PER_RECEIVER_CONCURRENCY: '2',
      WEBHOOKS_BUSY_REQUESTS: '0',
      WEBHOOKS_BUSY_CONCURRENCY: '3',
    }).webhooks;
    expect(webhooks).toMatchObject({
      perWebhookConcurrency: 2,
      perReceiverConcurrency: 2,
      busyRequests: 0,
      busyConcurrency: 3,
      dispatch: false,
      allowPrivateNetworks: true,
      retryScheduleMs: [100, 1_000],
      timeoutMs: 2_000,
      pollMs: 50,
      leaseMs: 5_000,
      concurrency: 8,
    });
  });

  it('refuses bad webhook settings with a message naming them', () => {
    expect(() => loadConfig({ WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'yes' })).toThrow(
      'WEBHOOKS_ALLOW_PRIVATE_NETWORKS must be true or false',
    );
    expect(() => loadConfig({ WEBHOOKS_RETRY_SCHEDULE: '5 minutes' })).toThrow('WEBHOOKS_RETRY_SCHEDULE');
    expect(() => loadConfig({ WEBHOOKS_TIMEOUT_MS: '0' })).toThrow('WEBHOOKS_TIMEOUT_MS must be an integer from 100');
    expect(() => loadConfig({ WEBHOOKS_TIMEOUT_MS: '10000', WEBHOOKS_LEASE_MS: '15000' })).toThrow(
      'WEBHOOKS_LEASE_MS must be at least twice WEBHOOKS_TIMEOUT_MS',
    );
    for (const days of ['-1', '5 days', '36501', '1e3']) {
      expect(() => loadConfig({ WEBHOOKS_DISABLE_AFTER_DAYS: days })).toThrow(
        'WEBHOOKS_DISABLE_AFTER_DAYS must be a number of days from 0 to 36500 (0: never)',
      );
    }
  });

  it('reads WEBHOOKS_DISABLE_AFTER_DAYS as days, fractions and 0 (never) included', () => {
    expect(loadConfig({ WEBHOOKS_DISABLE_AFTER_DAYS: '0' }).webhooks.disableAfterDays).toBe(0);
    expect(loadConfig({ WEBHOOKS_DISABLE_AFTER_DAYS: '3' }).webhooks.disableAfterDays).toBe(3);
    expect(loadConfig({ WEBHOOKS_DISABLE_AFTER_DAYS: '0.5' }).webhooks.disableAfterDays).toBe(0.5);
  });
});

describe('loadConfig: production and migrations', () => {
  it('refuses production without DATABASE_URL, naming the setting that allows the embedded database', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(
      'NODE_ENV=production needs DATABASE_URL (a postgres:// connection string); to run production on the embedded database in DATA_DIR (one process only), set ALLOW_EMBEDDED_DATABASE=true',
    );
    expect(loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://db/plants' })).toMatchObject({
      production: true,
      databaseUrl: 'postgres://db/plants',
    });
    expect(loadConfig({ NODE_ENV: 'production', ALLOW_EMBEDDED_DATABASE: 'true' })).toMatchObject({
      production: true,
      databaseUrl: undefined,
    });
    // Development runs on the embedded database without being asked.
    expect(loadConfig({}).databaseUrl).toBeUndefined();
  });

  it('takes libpq’s multi-host DATABASE_URL as pg_autoctl prints it, and refuses one it cannot use, saying why', () => {
    const uri = 'postgres://10.0.0.1:5432,10.0.0.2:5432/plants?target_session_attrs=read-write&sslmode=prefer';
    expect(loadConfig({ DATABASE_URL: uri }).databaseUrl).toBe(uri);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://db/plants' })).toThrow(
      'invalid configuration: DATABASE_URL must be a postgres:// or postgresql:// URL',
    );
    expect(() => loadConfig({ DATABASE_URL: 'postgres://a,b/plants?target_session_attrs=standby' })).toThrow(
      'DATABASE_URL target_session_attrs=standby would connect to a standby, and this service writes: use read-write or primary',
    );
    expect(() => loadConfig({ DATABASE_URL: 'postgres://u:secret@a/plants?sslmode=maybe' })).toThrow(
      /^invalid configuration: DATABASE_URL sslmode must be one of [^"]+, not "maybe"$/,
    );
  });

  it('applies migrations at start unless MIGRATE_ON_START=false', () => {
    expect(loadConfig({}).migrateOnStart).toBe(true);
    expect(loadConfig({ MIGRATE_ON_START: 'false' }).migrateOnStart).toBe(false);
    expect(() => loadConfig({ MIGRATE_ON_START: 'no' })).toThrow('MIGRATE_ON_START must be true or false');
  });
});

describe('loadConfig: tokens and rate limits', () => {
  it('limits tokens to 1000 requests per 10 s by default, per process unless REDIS_URL is set', () => {
    expect(loadConfig({}).tokens).toEqual({
      lastUsedFlushMs: 60_000,
      defaultRateLimit: { requests: 1000, perSeconds: 10 },
      authFailureLimit: { requests: 20, perSeconds: 60 },
      trustedProxyHops: 0,
    });
    expect(
      loadConfig({
        TOKEN_RATE_LIMIT: '600/60',
        REDIS_URL: 'redis://cache:6379/2',
        AUTH_FAILURE_LIMIT: 'off',
        TRUST_PROXY_HOPS: '2',
      }).tokens,
    ).toEqual({
      lastUsedFlushMs: 60_000,
      defaultRateLimit: { requests: 600, perSeconds: 60 },
      redis: { url: 'redis://cache:6379/2', keyPrefix: 'plant-store' },
      authFailureLimit: null,
      trustedProxyHops: 2,
    });
    expect(loadConfig({ TOKEN_RATE_LIMIT: 'off', TOKEN_LAST_USED_FLUSH_SECONDS: '5' }).tokens).toMatchObject({
      lastUsedFlushMs: 5_000,
      defaultRateLimit: null,
    });
  });

  it.each([
    [{ TOKEN_RATE_LIMIT: '600' }, 'TOKEN_RATE_LIMIT must be REQUESTS/SECONDS'],
    [
      { TOKEN_RATE_LIMIT: '0/60' },
      'TOKEN_RATE_LIMIT must be REQUESTS/SECONDS with 1-1000000 requests per 1-86400 seconds',
    ],
    [{ TOKEN_RATE_LIMIT: '10/86401' }, 'TOKEN_RATE_LIMIT must be REQUESTS/SECONDS'],
    [{ TOKEN_RATE_LIMIT: '1000001/1' }, 'TOKEN_RATE_LIMIT must be REQUESTS/SECONDS'],
    [{ REDIS_URL: 'http://cache:6379' }, 'REDIS_URL must be a redis:// or rediss:// URL'],
    [{ REDIS_KEY_PREFIX: 'has space' }, 'REDIS_KEY_PREFIX must be 1-64 letters'],
    [{ TOKEN_LAST_USED_FLUSH_SECONDS: '0' }, 'TOKEN_LAST_USED_FLUSH_SECONDS must be an integer from 1 to 3600'],
    [{ AUTH_FAILURE_LIMIT: '20' }, 'AUTH_FAILURE_LIMIT must be REQUESTS/SECONDS'],
    [{ TRUST_PROXY_HOPS: '11' }, 'TRUST_PROXY_HOPS must be an integer from 0 to 10'],
  ])('refuses %o', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe('deploy/plant-store.env.example', () => {
  it('names every variable the service reads, and is a configuration the service accepts', async () => {
    const text = await readFile(new URL('../../../deploy/plant-store.env.example', import.meta.url), 'utf8');
    // `NAME=value`, or `# NAME=value` for a setting shown but left unset.
    const named = [...text.matchAll(/^(?:# )?([A-Z][A-Z0-9_]*)=(.*)$/gm)];
    expect(new Set(named.map(([, name]) => name))).toEqual(new Set(CONFIG_VARIABLES));
    const set = Object.fromEntries(
      named.filter(([line]) => !line.startsWith('#')).map(([, name, value]) => [name, value]),
    );
    expect(loadConfig(set)).toMatchObject({
      production: true,
      databaseUrl: set.DATABASE_URL,
      port: 3000,
      metrics: { port: 9464 },
    });
  });
});

describe('loadConfig: traces', () => {
  const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };

  it('is off unless an OTLP endpoint is set, and when disabled or told no exporter', () => {
    expect(loadConfig({}).tracing).toEqual({ enabled: false });
    expect(loadConfig({ OTEL_TRACES_SAMPLER: 'always_off' }).tracing).toEqual({ enabled: false });
    expect(loadConfig(ENDPOINT).tracing.enabled).toBe(true);
    expect(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector/traces' }).tracing.enabled).toBe(true);
    expect(loadConfig({ ...ENDPOINT, OTEL_SDK_DISABLED: 'true' }).tracing).toEqual({ enabled: false });
    expect(loadConfig({ ...ENDPOINT, OTEL_TRACES_EXPORTER: 'none' }).tracing).toEqual({ enabled: false });
    expect(loadConfig({ ...ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT: '' }).tracing).toEqual({ enabled: false });
  });

  it('follows the specification’s defaults: http/protobuf, parent-based always-on, the batch processor’s numbers', () => {
    expect(loadConfig(ENDPOINT).tracing).toEqual({
      enabled: true,
      exporter: {
        protocol: 'http/protobuf',
        url: 'http://collector:4318/v1/traces',
        headers: {},
        timeoutMs: 10_000,
        compression: 'none',
      },
      sampler: { name: 'parentbased_always_on', ratio: 1 },
      batch: { scheduledDelayMs: 5_000, exportTimeoutMs: 30_000, maxQueueSize: 2_048, maxExportBatchSize: 512 },
      serviceName: 'plant-store',
      resourceAttributes: {},
    });
  });

  it('reads every variable, the traces-specific ones over the generic ones', () => {
    const tracing = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example/otlp/',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/custom/path',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Basic%20abc,x-tenant=a',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=b',
      OTEL_EXPORTER_OTLP_TIMEOUT: '2000',
      OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '3000',
      OTEL_EXPORTER_OTLP_COMPRESSION: 'none',
      OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: 'gzip',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_BSP_EXPORT_TIMEOUT: '1000',
      OTEL_BSP_MAX_QUEUE_SIZE: '100',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '10',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=staging,service.name=from-attributes',
    }).tracing;
    expect(tracing).toEqual({
      enabled: true,
      exporter: {
        protocol: 'http/json',
        url: 'https://traces.example/custom/path',
        headers: { authorization: 'Basic abc', 'x-tenant': 'b' },
        timeoutMs: 3_000,
        compression: 'gzip',
      },
      sampler: { name: 'parentbased_traceidratio', ratio: 0.25 },
      batch: { scheduledDelayMs: 100, exportTimeoutMs: 1_000, maxQueueSize: 100, maxExportBatchSize: 10 },
      serviceName: 'from-attributes',
      resourceAttributes: { 'deployment.environment.name': 'staging' },
    });
    expect(
      loadConfig({ ...ENDPOINT, OTEL_SERVICE_NAME: 'plants-eu', OTEL_RESOURCE_ATTRIBUTES: 'service.name=x' }),
    ).toMatchObject({ tracing: { serviceName: 'plants-eu', resourceAttributes: {} } });
    // The generic endpoint gets the traces path appended, with or without a trailing slash.
    for (const endpoint of ['https://collector.example/otlp', 'https://collector.example/otlp/']) {
      expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })).toMatchObject({
        tracing: { exporter: { url: 'https://collector.example/otlp/v1/traces' } },
      });
    }
  });

  it('refuses grpc, and every bad value, naming the variable (and never quoting a header value)', () => {
    const refused = (env: Record<string, string>) => {
      try {
        loadConfig({ ...ENDPOINT, ...env });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
      throw new Error(`accepted ${JSON.stringify(env)}`);
    };
    expect(refused({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toBe(
      'invalid configuration: OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: this service exports OTLP over HTTP; use http/protobuf (the default) or http/json',
    );
    expect(refused({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' })).toContain(
      'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc is not supported',
    );
    expect(refused({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http' })).toContain(
      'OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json',
    );
    expect(refused({ OTEL_TRACES_SAMPLER_ARG: '1.5' })).toBe(
      'invalid configuration: OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1',
    );
    expect(refused({ OTEL_TRACES_SAMPLER_ARG: 'half' })).toContain(
      'OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1',
    );
    expect(refused({ OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toContain(
      'OTEL_TRACES_SAMPLER must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio',
    );
    expect(refused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toContain(
      'OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL',
    );
    expect(refused({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'not a url' })).toContain(
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an absolute http:// or https:// URL',
    );
    expect(refused({ OTEL_SDK_DISABLED: 'yes' })).toContain('OTEL_SDK_DISABLED must be true or false');
    expect(refused({ OTEL_TRACES_EXPORTER: 'zipkin' })).toContain('OTEL_TRACES_EXPORTER must be otlp or none');
    expect(refused({ OTEL_EXPORTER_OTLP_COMPRESSION: 'br' })).toContain(
      'OTEL_EXPORTER_OTLP_COMPRESSION must be gzip or none',
    );
    expect(refused({ OTEL_EXPORTER_OTLP_TIMEOUT: '0' })).toContain('OTEL_EXPORTER_OTLP_TIMEOUT must be an integer');
    expect(refused({ OTEL_BSP_SCHEDULE_DELAY: '5s' })).toContain('OTEL_BSP_SCHEDULE_DELAY must be an integer');
    expect(refused({ OTEL_BSP_MAX_QUEUE_SIZE: '10', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '20' })).toBe(
      'invalid configuration: OTEL_BSP_MAX_EXPORT_BATCH_SIZE must be at most OTEL_BSP_MAX_QUEUE_SIZE',
    );
    const secret = 'Bearer%20s3cr3t%ZZ';
    const headers = refused({ OTEL_EXPORTER_OTLP_HEADERS: `authorization=${secret}` });
    expect(headers).toBe(
      'invalid configuration: OTEL_EXPORTER_OTLP_HEADERS has a value for "authorization" that is not valid percent-encoding',
    );
    expect(refused({ OTEL_EXPORTER_OTLP_TRACES_HEADERS: 's3cr3t' })).toBe(
      'invalid configuration: OTEL_EXPORTER_OTLP_TRACES_HEADERS must be a comma-separated list of key=value pairs',
    );
    expect(refused({ OTEL_RESOURCE_ATTRIBUTES: '=x' })).toContain('OTEL_RESOURCE_ATTRIBUTES must be a comma-separated');
  });
});
