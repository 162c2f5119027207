import type { RateLimitPolicy, RateLimitVerdict } from './rate-limit-policy.js';

interface Window {
  consumed: number;
  readonly endsAt: number;
}

/** Past this many windows remembered, the ended ones are dropped when the next one begins. */
const SWEEP_ABOVE = 1024;

/**
 * One policy's requests per key (a token id) in this process's memory, in fixed windows that begin
 * with a key's first request: what rate-limiter-flexible's RateLimiterMemory counted (the same
 * verdicts: every request counted, the over-limit ones too; remaining never below 0; the window's
 * end as the reset), synchronously. RateLimiterMemory answered with a promise and a result object
 * a request, and its store a timer a window: with the promises of the limiter around it, about
 * 1.5% of the CPU of a 400 or a page in a profile. Memory: a window per key that sent a request
 * in the last window's length, ended ones swept as new ones begin once there are many.
 */
export class MemoryWindows {
  readonly #windows = new Map<string, Window>();
  readonly #windowMs: number;

  constructor(
    readonly policy: RateLimitPolicy,
    // Read through Date at each call: the wall clock, as rate-limiter-flexible read it.
    private readonly now: () => number = () => Date.now(),
  ) {
    this.#windowMs = policy.perSeconds * 1000;
  }

  consume(key: string): RateLimitVerdict {
    const at = this.now();
    let window = this.#windows.get(key);
    if (window === undefined || window.endsAt <= at) {
      if (this.#windows.size > SWEEP_ABOVE) this.#sweep(at);
      window = { consumed: 0, endsAt: at + this.#windowMs };
      this.#windows.set(key, window);
    }
    window.consumed += 1;
    const { requests } = this.policy;
    const allowed = window.consumed <= requests;
    return {
      allowed,
      policy: this.policy,
      remaining: allowed ? requests - window.consumed : 0,
      resetSeconds: Math.max(allowed ? 0 : 1, Math.ceil((window.endsAt - at) / 1000)),
    };
  }

  /** Windows remembered now. */
  size(): number {
    return this.#windows.size;
  }

  #sweep(at: number): void {
    for (const [key, window] of this.#windows) if (window.endsAt <= at) this.#windows.delete(key);
  }
}
