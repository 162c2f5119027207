export interface AuthFailureLimiterOptions {
  /** Failed authentications an address may have in a window; past them it is refused until the window ends. */
  readonly maxFailures: number;
  readonly windowMs: number;
  /** Most addresses remembered at once; beyond, the longest-remembered one is forgotten. */
  readonly maxAddresses: number;
  /** The clock (ms); Date.now by default. */
  readonly now?: () => number;
}

export interface AuthFailureLimiter {
  /** Milliseconds until `address` may fail again; 0 while it is within its budget. */
  blockedForMs(address: string): number;
  /** Counts a failed authentication of `address`; true when this one used up its budget. */
  recordFailure(address: string): boolean;
  /** Addresses remembered now (at most maxAddresses). */
  size(): number;
}

interface Window {
  failures: number;
  readonly endsAt: number;
}

/**
 * Failed authentications per client address, in fixed windows, in this process's memory. Its
 * memory is bounded whatever the flood: at most `maxAddresses` windows (about 100 bytes each),
 * the one remembered longest dropped first. A flood from more addresses than that only makes the
 * limiter forget some of them early (each then gets a fresh budget): it never grows. Not
 * rate-limiter-flexible's memory store: that keeps a record and a timer per key until its window
 * ends, with no cap on the number of keys.
 */
export function createAuthFailureLimiter(options: AuthFailureLimiterOptions): AuthFailureLimiter {
  const { maxFailures, windowMs, maxAddresses } = options;
  const now = options.now ?? Date.now;
  const windows = new Map<string, Window>();
  return {
    blockedForMs(address) {
      const window = windows.get(address);
      if (window === undefined) return 0;
      const left = window.endsAt - now();
      if (left <= 0) {
        windows.delete(address);
        return 0;
      }
      return window.failures >= maxFailures ? left : 0;
    },
    recordFailure(address) {
      const at = now();
      let window = windows.get(address);
      if (window === undefined || window.endsAt <= at) {
        // A new window goes last: the first key is always the one remembered longest.
        windows.delete(address);
        window = { failures: 0, endsAt: at + windowMs };
        windows.set(address, window);
        while (windows.size > maxAddresses) {
          const oldest = windows.keys().next().value;
          if (oldest === undefined) break;
          windows.delete(oldest);
        }
      }
      window.failures += 1;
      return window.failures === maxFailures;
    },
    size: () => windows.size,
  };
}
