/** Reports how long one repository call took, for metrics. */
export type ObserveDatabaseCall = (call: DatabaseCall) => void;

export interface DatabaseCall {
  /** The repository method: `createPlant`, `listPlants`, `authenticateToken`, ... */
  readonly operation: string;
  readonly durationSeconds: number;
  /** `error` when it threw (a domain error such as a conflict counts too). */
  readonly outcome: 'ok' | 'error';
}

/** `fn`, timed: every call reports its duration and outcome to `observe`. */
export function observed<TArgs extends unknown[], TResult>(
  operation: string,
  observe: ObserveDatabaseCall | undefined,
  fn: (...args: TArgs) => Promise<TResult>,
): (...args: TArgs) => Promise<TResult> {
  if (!observe) return fn;
  return async (...args) => {
    const started = performance.now();
    let outcome: DatabaseCall['outcome'] = 'error';
    try {
      const result = await fn(...args);
      outcome = 'ok';
      return result;
    } finally {
      observe({ operation, durationSeconds: (performance.now() - started) / 1000, outcome });
    }
  };
}
