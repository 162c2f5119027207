import { createHistogram } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { type Measurement, microsecondsToMs } from './measurement.js';

/** One request of a load: a create or an invalid body (POST with a body), or a read (GET). */
export interface BenchRequest {
  readonly method: 'GET' | 'POST' | 'PATCH';
  /** Path and query, e.g. `/plants/42` or `/plants?limit=20&after=7`. */
  readonly path: string;
  readonly body?: string;
  /** Headers of this request alone (a token of its own), over the load's. */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface HttpLoad {
  /** Base URL of the server under load. */
  readonly url: string;
  readonly token: string | undefined;
  /** A new request for every request sent (a new id, a random read). */
  readonly nextRequest: () => BenchRequest;
  readonly expectedStatus: number;
}

/**
 * `load` from `concurrency` keep-alive connections, one request in flight on each, for `seconds`,
 * or until `amount` requests have been answered; with `ratePerSecond`, no faster than that in all
 * (autocannon's overallRate), else as fast as the answers come.
 */
export function measureHttp(
  load: HttpLoad,
  concurrency: number,
  limit: { readonly seconds: number } | { readonly amount: number },
  ratePerSecond?: number,
): Promise<Measurement> {
  const latencyUs = createHistogram();
  const authorization: Record<string, string> =
    load.token === undefined ? {} : { authorization: `Bearer ${load.token}` };
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: load.url,
        connections: concurrency,
        pipelining: 1,
        ...('seconds' in limit ? { duration: limit.seconds } : { amount: limit.amount }),
        ...(ratePerSecond === undefined ? {} : { overallRate: ratePerSecond }),
        requests: [
          {
            setupRequest: (request) => {
              const next = load.nextRequest();
              request.method = next.method;
              request.path = next.path;
              if (next.body === undefined) {
                request.headers = next.headers === undefined ? authorization : { ...authorization, ...next.headers };
                delete request.body;
              } else {
                request.headers = { ...authorization, 'content-type': 'application/json', ...next.headers };
                request.body = next.body;
              }
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
