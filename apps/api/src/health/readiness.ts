import { DatabaseUnavailableError } from '@plant-store/db';

/**
 * Whether the service can do its work: its database answers and takes writes. Asked by `/readyz`
 * on either port, at whatever rate probes and strangers send it, while the database is asked at
 * most once per `maxAgeMs`: the answer is kept that long, and callers in the meantime share it
 * (or the one check in flight).
 */
export interface Readiness {
  /** Resolves when ready; rejects with DatabaseUnavailableError when not. */
  check(): Promise<void>;
  /**
   * The database was seen failing (a connection lost, a host refused, the primary moved): the
   * kept answer becomes "not ready" at once, without a query, and the next check asks again once
   * `maxAgeMs` has passed. A check already in flight no longer counts.
   */
  markUnavailable(): void;
}

export interface ReadinessOptions {
  /** Asks the database (Database.ping): resolves when it answers and takes writes. */
  readonly ping: () => Promise<void>;
  /** How long an answer is kept: the database is asked at most once per this many ms. */
  readonly maxAgeMs: number;
  readonly now?: () => number;
}

/** Half a second: at most two queries a second per process, whatever the probe rate. */
export const READINESS_MAX_AGE_MS = 500;

export function createReadiness({ ping, maxAgeMs, now = () => performance.now() }: ReadinessOptions): Readiness {
  let answer: { readonly at: number; readonly error: unknown } | undefined;
  let inFlight: Promise<void> | undefined;
  // Bumped by markUnavailable: a check begun before the failure may have reached the old primary.
  let generation = 0;

  const answered = (error: unknown): Promise<void> => (error === undefined ? Promise.resolve() : Promise.reject(error));

  function ask(): Promise<void> {
    const askedIn = generation;
    const check: Promise<void> = ping()
      .then(
        () => {
          if (askedIn === generation) answer = { at: now(), error: undefined };
        },
        (error: unknown) => {
          if (askedIn === generation) answer = { at: now(), error };
        },
      )
      .then(() => {
        if (inFlight === check) inFlight = undefined;
        // The kept answer: a check that a failure overtook reports the failure, never ready.
        return answered(answer === undefined ? new DatabaseUnavailableError() : answer.error);
      });
    inFlight = check;
    return check;
  }

  function current(): Promise<void> {
    if (answer !== undefined && now() - answer.at < maxAgeMs) return answered(answer.error);
    return inFlight ?? ask();
  }

  return {
    check: current,
    markUnavailable() {
      generation++;
      inFlight = undefined;
      answer = { at: now(), error: new DatabaseUnavailableError() };
    },
  };
}
