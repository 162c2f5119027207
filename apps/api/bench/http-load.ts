import { createHistogram } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { type Measurement, microsecondsToMs } from './measurement.js';

export interface HttpLoad {
  /** Base URL of the server under load. */
  readonly url: string;
  readonly token: string | undefined;
  /** A new body for every request (a new id each time). */
  readonly nextBody: () => string;
  readonly expectedStatus: number;
}

/** `POST /plants` from `concurrency` keep-alive connections, one request in flight on each, for `seconds`. */
export function measureHttp(load: HttpLoad, concurrency: number, seconds: number): Promise<Measurement> {
  const latencyUs = createHistogram();
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (load.token !== undefined) headers.authorization = `Bearer ${load.token}`;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${load.url}/plants`,
        method: 'POST',
        headers,
        connections: concurrency,
        pipelining: 1,
        duration: seconds,
        requests: [
          {
            setupRequest: (request) => {
              request.body = load.nextBody();
              return request;
            },
          },
        ],
      },
      (error, result) => {
        if (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
          return;
        }
        const statusCodes: Record<string, number> = {};
        for (const [status, stats] of Object.entries(result.statusCodeStats ?? {})) {
          statusCodes[status] = stats.count ?? 0;
        }
        const completed = result.requests.total;
        resolve({
          perSecond: completed / result.duration,
          p50Ms: microsecondsToMs(latencyUs, 50),
          p99Ms: microsecondsToMs(latencyUs, 99),
          completed,
          non2xx: result.non2xx,
          unexpected: completed - (statusCodes[String(load.expectedStatus)] ?? 0),
          errors: result.errors,
          timeouts: result.timeouts,
          statusCodes,
          seconds: result.duration,
        });
      },
    );
    instance.on('response', (_client, _status, _bytes, responseTimeMs) => {
      latencyUs.record(Math.max(1, Math.round(responseTimeMs * 1000)));
    });
  });
}
