import { createTestStorage, type TestStorage, testEngines, testToken } from '@plant-store/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceMetrics } from '../metrics/service-metrics.js';
import { failOnContractViolations } from '../test-support/checked-fetch.js';
import { request, startTestService, type TestService } from '../test-support/test-service.js';

failOnContractViolations();

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/** The samples of a Prometheus text exposition (comment lines skipped). */
function parseSamples(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match?.[1] || !match[3]) throw new Error(`not a sample line: ${line}`);
      const labels = Object.fromEntries(
        [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map(([, key, value]) => [
          key,
          value,
        ]),
      );
      return { name: match[1], labels, value: Number(match[3]) };
    });
}

/** The value of the one sample with this name and exactly these labels (undefined when none). */
function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter(
    (sample) =>
      sample.name === name &&
      Object.keys(sample.labels).length === Object.keys(labels).length &&
      Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

async function scrape(url: string): Promise<{ text: string; samples: Sample[] }> {
  const response = await request(url, '/metrics');
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  expect(response.headers.get('cache-control')).toBe('no-store');
  return { text: response.text, samples: parseSamples(response.text) };
}

describe.each(testEngines())('GET /metrics on %s', (engine) => {
  let storage: TestStorage;
  let service: TestService;
  let token: string;
  let scraped: { text: string; samples: Sample[] };

  const ID = '9007199254740993';
  const NAME = 'metrics-plant-name';
  const CLIENT_REQUEST_ID = 'client-request-id-marker';

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    service = await startTestService(storage);
    token = (await service.db.issueToken(testToken({ name: 'metrics', scopes: ['plants:read', 'plants:write'] })))
      .token;
    const body = `{"id": ${ID}, "name": "${NAME}"}`;
    const statuses = [
      (await request(service.url, '/plants', { body, token, headers: { 'X-Request-Id': CLIENT_REQUEST_ID } })).status,
      (await request(service.url, '/plants', { body, token })).status,
      (await request(service.url, '/plants', { body: `{"id": ${ID}, "name": "other"}`, token })).status,
      (await request(service.url, '/plants', { body: '{"id": 1}', token })).status,
      (await request(service.url, '/plants', { body })).status,
      (await request(service.url, `/plants/${ID}`, { token })).status,
      (await request(service.url, `/plants/${ID}`, { token })).status,
      (await request(service.url, '/plants/404404', { token })).status,
      (await request(service.url, '/secret-path/9', { token })).status,
      (await request(service.url, '/plants', { method: 'PROPFIND', token })).status,
      (await request(service.url, '/healthz')).status,
      // A token the process does not hold: looked up in the database (a known one never is).
      (await request(service.url, `/plants/${ID}`, { token: 'pst_made_up' })).status,
    ];
    expect(statuses).toEqual([200, 200, 400, 400, 401, 200, 200, 404, 404, 405, 200, 401]);
    scraped = await scrape(service.url);
  });
  afterAll(async () => {
    await service?.close();
    await storage?.dispose();
  });

  it('counts requests by method, route pattern and status', () => {
    const count = (method: string, route: string, status: number) =>
      sampleValue(scraped.samples, 'http_requests_total', { method, route, status: String(status) });
    expect(count('POST', '/plants', 200)).toBe(2);
    expect(count('POST', '/plants', 400)).toBe(2);
    expect(count('POST', '/plants', 401)).toBe(1);
    expect(count('GET', '/plants/:id', 200)).toBe(2);
    expect(count('GET', '/plants/:id', 401)).toBe(1);
    expect(count('GET', '/plants/:id', 404)).toBe(1);
    expect(count('GET', 'unmatched', 404)).toBe(1);
    expect(count('other', 'unmatched', 405)).toBe(1);
    expect(count('GET', '/healthz', 200)).toBe(1);
    // Only patterns and the fixed method set, whatever the client sent.
    const routes = new Set(scraped.samples.filter((s) => s.name === 'http_requests_total').map((s) => s.labels.route));
    const methods = new Set(
      scraped.samples.filter((s) => s.name === 'http_requests_total').map((s) => s.labels.method),
    );
    for (const route of routes)
      expect(['/plants', '/plants/:id', '/healthz', '/openapi.json', 'unmatched']).toContain(route);
    for (const method of methods) expect(['GET', 'POST', 'other']).toContain(method);
  });

  it('times requests in a histogram with the same labels', () => {
    const labels = { method: 'GET', route: '/plants/:id', status: '200' };
    expect(sampleValue(scraped.samples, 'http_request_duration_seconds_count', labels)).toBe(2);
    expect(sampleValue(scraped.samples, 'http_request_duration_seconds_sum', labels)).toBeGreaterThan(0);
    expect(sampleValue(scraped.samples, 'http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(2);
    const bounds = scraped.samples
      .filter((s) => s.name === 'http_request_duration_seconds_bucket' && s.labels.route === '/plants/:id')
      .map((s) => s.labels.le);
    expect(bounds).toEqual(expect.arrayContaining(['0.001', '0.005', '0.05', '1', '+Inf']));
  });

  it('times database calls by operation and outcome', () => {
    const count = (operation: string, outcome: string) =>
      sampleValue(scraped.samples, 'db_call_duration_seconds_count', { operation, outcome });
    expect(count('createPlant', 'ok')).toBeGreaterThanOrEqual(2);
    // The same id with other content: a conflict, thrown by the repository.
    expect(count('createPlant', 'error')).toBe(1);
    expect(count('findPlant', 'ok')).toBe(3);
    // Seven requests with the known token, one with a made-up one: one lookup.
    expect(count('authenticateToken', 'ok')).toBe(1);
    expect(
      sampleValue(scraped.samples, 'db_call_duration_seconds_sum', { operation: 'findPlant', outcome: 'ok' }),
    ).toBeGreaterThan(0);
  });

  it('includes process and Node metrics', () => {
    const names = new Set(scraped.samples.map((sample) => sample.name));
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_start_time_seconds',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_version_info',
    ]) {
      expect(names).toContain(name);
    }
  });

  it('counts the requests each token authenticated by its name and status, never the token', () => {
    const count = (status: number) =>
      sampleValue(scraped.samples, 'token_requests_total', { token: 'metrics', status: String(status) });
    // The 401 had no token, and the unknown path and method never reached authentication.
    expect([count(200), count(400), count(404), count(401)]).toEqual([4, 2, 1, undefined]);
  });

  it('shows no token, id, name, raw path or client request id', () => {
    for (const secret of [token, 'pst_', ID, '404404', NAME, 'secret-path', CLIENT_REQUEST_ID]) {
      expect(scraped.text).not.toContain(secret);
    }
  });

  it('counts its own scrapes, and needs no token', async () => {
    const again = await scrape(service.url);
    expect(sampleValue(again.samples, 'http_requests_total', { method: 'GET', route: '/metrics', status: '200' })).toBe(
      1,
    );
    expect(service.metricsUrl).toBe(`${service.url}/metrics`);
  });
});

describe('metrics settings (engine-independent: on the embedded database)', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  async function start(env: Record<string, string>): Promise<TestService> {
    const storage = await createTestStorage('pglite', { migrated: true });
    cleanups.push(() => storage.dispose());
    const service = await startTestService(storage, env);
    cleanups.push(() => service.close());
    return service;
  }

  it('METRICS_ENABLED=false: no /metrics, and the OpenAPI document does not list it', async () => {
    const service = await start({ METRICS_ENABLED: 'false' });
    expect(service.metricsUrl).toBeUndefined();
    expect((await request(service.url, '/metrics')).status).toBe(404);
    const document = (await request(service.url, '/openapi.json')).text;
    expect(document).not.toContain('/metrics');
  });

  it('NODE_ENV=production without METRICS_PORT: no /metrics anywhere, unless METRICS_ON_API_PORT=true', async () => {
    const production = { NODE_ENV: 'production', ALLOW_EMBEDDED_DATABASE: 'true' };
    const hidden = await start(production);
    expect(hidden.metricsUrl).toBeUndefined();
    expect((await request(hidden.url, '/metrics')).status).toBe(404);
    expect((await request(hidden.url, '/openapi.json')).text).not.toContain('/metrics');
    expect((await request(hidden.url, '/healthz')).status).toBe(200);

    const asked = await start({ ...production, METRICS_ON_API_PORT: 'true' });
    expect(asked.metricsUrl).toBe(`${asked.url}/metrics`);
    const scraped = await request(asked.url, '/metrics');
    expect(scraped.status).toBe(200);
    expect(scraped.text).toContain('http_requests_total');
  });

  it('METRICS_PORT: served on a listener of its own, not on the API port', async () => {
    const service = await start({ METRICS_PORT: '0' });
    const metricsUrl = service.metricsUrl ?? '';
    expect(new URL(metricsUrl).port).not.toBe(new URL(service.url).port);
    expect(new URL(metricsUrl).pathname).toBe('/metrics');
    expect((await request(service.url, '/healthz')).status).toBe(200);
    expect((await request(service.url, '/metrics')).status).toBe(404);
    expect((await request(service.url, '/openapi.json')).text).not.toContain('/metrics');

    // A plain fetch: this port serves no OpenAPI document to check against.
    const scraped = await fetch(metricsUrl);
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const samples = parseSamples(await scraped.text());
    expect(sampleValue(samples, 'http_requests_total', { method: 'GET', route: '/healthz', status: '200' })).toBe(1);
    const other = await fetch(new URL('/other', metricsUrl));
    expect({ status: other.status, body: await other.json() }).toEqual({
      status: 404,
      body: { error: 404, message: 'no route for GET /other' },
    });
    expect((await fetch(metricsUrl, { method: 'POST' })).status).toBe(405);

    // The probes are served there too: a flood of the API's port does not fail them.
    const health = await fetch(new URL('/healthz', metricsUrl));
    expect({ status: health.status, body: await health.json() }).toEqual({ status: 200, body: { status: 'ok' } });
    const ready = await fetch(new URL('/readyz', metricsUrl));
    expect({ status: ready.status, body: await ready.json() }).toEqual({ status: 200, body: { status: 'ready' } });

    await service.close();
    await expect(fetch(metricsUrl)).rejects.toThrow();
  });
});

describe('createServiceMetrics', () => {
  it('keeps each app on a registry of its own', async () => {
    const first = createServiceMetrics();
    const second = createServiceMetrics();
    first.observeRequest({ method: 'GET', route: '/healthz', status: 200, durationSeconds: 0.002 });
    second.observeRequest({ method: 'BREW', route: 'unmatched', status: 405, durationSeconds: 0.001 });
    const one = parseSamples(await first.registry.metrics());
    const two = parseSamples(await second.registry.metrics());
    expect(sampleValue(one, 'http_requests_total', { method: 'GET', route: '/healthz', status: '200' })).toBe(1);
    expect(
      sampleValue(two, 'http_requests_total', { method: 'GET', route: '/healthz', status: '200' }),
    ).toBeUndefined();
    expect(sampleValue(two, 'http_requests_total', { method: 'other', route: 'unmatched', status: '405' })).toBe(1);
  });
});
