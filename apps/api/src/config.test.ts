import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

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
