import { testEngines } from '@plant-store/db/testing';
import { describe, expect, it } from 'vitest';
import { READINESS_MAX_AGE_MS } from './health/readiness.js';
import { serviceLifecycle } from './test-support/service-lifecycle.js';
import { startTestService } from './test-support/test-service.js';

/** The database's pings so far, as the service's own metrics count them. */
async function pings(metricsUrl: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  const line = text
    .split('\n')
    .find((entry) => entry.startsWith('db_call_duration_seconds_count{') && entry.includes('operation="ping"'));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

describe.each(testEngines())('/readyz on %s', (engine) => {
  const { cleanups, storage } = serviceLifecycle(engine);

  it('answers 5,000 probes on both ports with a few database queries, not 5,000', { timeout: 120_000 }, async () => {
    const service = await startTestService(await storage(), { METRICS_PORT: '0' });
    cleanups.push(() => service.close());
    const metricsUrl = service.metricsUrl ?? '';
    const probeBase = new URL(metricsUrl).origin;
    const before = await pings(metricsUrl);
    const startedAt = performance.now();
    let sent = 0;
    const statuses = new Map<number, number>();
    // 32 clients at once, alternating between the API port and the probe port.
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (sent < 5_000) {
          const base = sent++ % 2 === 0 ? service.url : probeBase;
          const response = await fetch(`${base}/readyz`);
          await response.arrayBuffer();
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        }
      }),
    );
    const elapsedMs = performance.now() - startedAt;
    const queries = (await pings(metricsUrl)) - before;
    console.log(
      `${engine}: 5,000 /readyz in ${Math.round(elapsedMs)} ms (both ports) cost ${queries} database queries`,
    );
    expect(Object.fromEntries(statuses)).toEqual({ 200: 5_000 });
    // At most one query per READINESS_MAX_AGE_MS of the run (and one more for its start).
    expect(queries).toBeGreaterThanOrEqual(1);
    expect(queries).toBeLessThanOrEqual(Math.ceil(elapsedMs / READINESS_MAX_AGE_MS) + 1);
  });
});
