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

  it('refuses bad metrics settings with a message naming them', () => {
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
      retryScheduleMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
      timeoutMs: 10_000,
      pollMs: 1_000,
      leaseMs: 60_000,
      concurrency: 16,
      perWebhookConcurrency: 4,
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
    }).webhooks;
    expect(webhooks).toMatchObject({
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

  it('applies migrations at start unless MIGRATE_ON_START=false', () => {
    expect(loadConfig({}).migrateOnStart).toBe(true);
    expect(loadConfig({ MIGRATE_ON_START: 'false' }).migrateOnStart).toBe(false);
    expect(() => loadConfig({ MIGRATE_ON_START: 'no' })).toThrow('MIGRATE_ON_START must be true or false');
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
    expect(loadConfig(set)).toMatchObject({ production: true, databaseUrl: set.DATABASE_URL, port: 3000 });
  });
});
