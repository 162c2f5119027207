export interface RetryOptions {
  /** Attempts in all, the first one included (1: never retry). Default 3. */
  readonly attempts?: number;
  /** The backoff before the second attempt is drawn from [0, baseDelayMs]; it doubles per attempt. Default 200. */
  readonly baseDelayMs?: number;
  /** No wait is longer, a `Retry-After` included. Default 5000. */
  readonly maxDelayMs?: number;
}

export interface RetryPolicy {
  readonly attempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { attempts: 3, baseDelayMs: 200, maxDelayMs: 5000 };

/** The retry options with defaults filled in; a value that makes no sense throws a RangeError. */
export function resolveRetryPolicy(options: RetryOptions = {}): RetryPolicy {
  const policy = { ...DEFAULT_RETRY_POLICY, ...options };
  if (!Number.isSafeInteger(policy.attempts) || policy.attempts < 1) {
    throw new RangeError(`retry.attempts must be an integer of at least 1, not ${policy.attempts}`);
  }
  for (const name of ['baseDelayMs', 'maxDelayMs'] as const) {
    if (!Number.isFinite(policy[name]) || policy[name] < 0) {
      throw new RangeError(`retry.${name} must be a finite number of at least 0, not ${policy[name]}`);
    }
  }
  return policy;
}

/**
 * How long to wait after the failed attempt number `attempt` (1-based). When the answer said
 * `Retry-After`, exactly that (the service knows best), capped by `maxDelayMs`. Otherwise
 * exponential backoff with full jitter: uniform in [0, min(maxDelayMs, baseDelayMs * 2^(attempt-1))],
 * so that clients that failed together do not retry together.
 */
export function retryDelayMs(
  policy: RetryPolicy,
  attempt: number,
  retryAfterSeconds: number | undefined,
  random: () => number = Math.random,
): number {
  if (retryAfterSeconds !== undefined) return Math.min(retryAfterSeconds * 1000, policy.maxDelayMs);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return random() * ceiling;
}

/**
 * A `Retry-After` header value in seconds (RFC 9110: delay-seconds or an HTTP-date), or
 * undefined when absent or unreadable. A date in the past means now: 0.
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^[0-9]+$/.test(text)) return Number(text);
  // Each HTTP-date form starts with a day name; Date.parse alone would read '1.5' as a date.
  if (!/^[A-Za-z]{3}/.test(text)) return undefined;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
