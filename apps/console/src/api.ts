import { createPlantStoreClient, isPlantStoreError, type PlantStoreClient } from '@plant-store/client';

/** The service the page came from: same origin, and the path the console is served below. */
export function serviceBaseUrl(): URL {
  // The page is `<base>/console`: `.` resolves to `<base>/`.
  return new URL('.', window.location.href);
}

/** A client for the service, with `token`. No retries: a person decides whether to try again. */
export function clientFor(token: string): PlantStoreClient {
  return createPlantStoreClient({ baseUrl: serviceBaseUrl(), token, retry: { attempts: 1 } });
}

/** What went wrong, as the page tells it. */
export interface Problem {
  /** `expired`: the token is not valid any more (401); `rate`: 429; `refused`: another API error; `failed`: no answer. */
  readonly kind: 'expired' | 'rate' | 'refused' | 'failed';
  readonly message: string;
  readonly retryAfterSeconds?: number;
}

/** Reads any failure of a call into what the page shows: the API's own message where it sent one. */
export function problemOf(error: unknown): Problem {
  if (!isPlantStoreError(error))
    return { kind: 'refused', message: error instanceof Error ? error.message : String(error) };
  if (error.kind === 'error-response' && error.status === 401) {
    return { kind: 'expired', message: error.message };
  }
  if (error.status === 429) {
    const wait = error.retryAfterSeconds;
    return {
      kind: 'rate',
      message: `Too many requests: ${error.message}. Retry ${wait === undefined ? 'in a moment' : `in ${wait} s`}.`,
      ...(wait === undefined ? {} : { retryAfterSeconds: wait }),
    };
  }
  if (error.kind === 'network' || error.kind === 'timeout') {
    return { kind: 'failed', message: `The service did not answer: ${error.message}` };
  }
  return { kind: 'refused', message: error.message };
}
