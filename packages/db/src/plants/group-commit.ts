import { DatabaseUnavailableError } from '../errors.js';

export interface GroupCommitOptions {
  /** Most requests one statement writes. */
  readonly maxBatchSize: number;
  /** Most statements in flight at once (at most the connection pool's size). */
  readonly maxConcurrentBatches: number;
  /** Most requests waiting for a statement; more are refused at once (503: overloaded). */
  readonly maxQueued: number;
  /** How long a request may wait for its statement to start; then it is refused (503). */
  readonly maxWaitMs: number;
  /** What the requests are, in the overload messages: `creates`, `updates`. */
  readonly noun: string;
}

/** One request waiting for its statement, with how to answer it. */
export interface Pending<TRequest, TResult> {
  readonly request: TRequest;
  readonly queuedAt: number;
  readonly resolve: (result: TResult) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Writes one batch and settles each of its requests; never throws. Resolves to the
 * DatabaseUnavailableError when the database was out of reach (what waits behind it is then
 * answered at once with it), else to undefined.
 */
export type WriteBatch<TRequest, TResult> = (batch: readonly Pending<TRequest, TResult>[]) => Promise<unknown>;

export interface GroupCommit<TRequest, TResult> {
  submit(request: TRequest): Promise<TResult>;
  /** Refuses new requests, and resolves once every queued and running one is answered. */
  close(): Promise<void>;
}

export function overloaded(reason: string): DatabaseUnavailableError {
  return new DatabaseUnavailableError({ cause: new Error(reason) });
}

/**
 * Group commit: requests that arrive while statements are in flight wait, and go together as one
 * statement (so one transaction and one commit, one WAL flush, for all of them), written by
 * `writeBatch`. A lone request is written at once. Nothing resolves before its statement has
 * committed: `writeBatch` settles each request when its statement is done.
 */
export function createGroupCommit<TRequest, TResult>(
  options: GroupCommitOptions,
  writeBatch: WriteBatch<TRequest, TResult>,
): GroupCommit<TRequest, TResult> {
  const queue: Pending<TRequest, TResult>[] = [];
  let inFlight = 0;
  let pumpScheduled = false;
  let closed = false;
  const idleWaiters: Array<() => void> = [];

  function settleIdle(): void {
    if (queue.length === 0 && inFlight === 0) for (const resolve of idleWaiters.splice(0)) resolve();
  }

  /**
   * Starts the queued requests on the next turn of the event loop, not at once: every request
   * that arrived in this turn is queued by then and goes in the same batch. This matters most on
   * PGlite, whose statements run synchronously and block the loop: started at once, a batch would
   * hold only the first request of each turn.
   */
  function schedulePump(): void {
    if (pumpScheduled) return;
    pumpScheduled = true;
    setImmediate(() => {
      pumpScheduled = false;
      pump();
    });
  }

  function pump(): void {
    // Requests that waited too long for a statement are answered 503 now rather than late: a
    // client retries them, instead of holding a connection open behind a slow database. (This
    // runs when a statement ends, so a request waits at most maxWaitMs plus one statement, and a
    // statement at most the driver's query timeout.)
    const deadline = performance.now() - options.maxWaitMs;
    while (queue.length > 0 && (queue[0]?.queuedAt ?? Number.POSITIVE_INFINITY) < deadline) {
      queue.shift()?.reject(overloaded(`waited over ${options.maxWaitMs} ms for the database`));
    }
    while (queue.length > 0 && inFlight < options.maxConcurrentBatches) {
      const batch = queue.splice(0, options.maxBatchSize);
      inFlight++;
      void writeBatch(batch)
        .then((unavailable) => {
          // The database is out of reach: what waits behind this batch would wait a whole
          // timeout more for the same answer. Answer it now (503, retry) instead.
          if (unavailable !== undefined) for (const pending of queue.splice(0)) pending.reject(unavailable);
        })
        .catch((error: unknown) => {
          // writeBatch settles every request itself; this is a last resort against a bug.
          for (const pending of batch) pending.reject(error);
        })
        .finally(() => {
          inFlight--;
          schedulePump();
          settleIdle();
        });
    }
    settleIdle();
  }

  return {
    submit(request) {
      if (closed) return Promise.reject(overloaded('the database is closing'));
      if (queue.length >= options.maxQueued) {
        return Promise.reject(overloaded(`${queue.length} ${options.noun} are already waiting for the database`));
      }
      return new Promise((resolve, reject) => {
        queue.push({ request, queuedAt: performance.now(), resolve, reject });
        schedulePump();
      });
    },
    close() {
      closed = true;
      return new Promise((resolve) => {
        idleWaiters.push(resolve);
        settleIdle();
      });
    },
  };
}
