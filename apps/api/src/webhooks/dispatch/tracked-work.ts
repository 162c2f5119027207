export interface TrackedWork {
  /** Keeps `work` (which never rejects) among what close() waits for; `settled` is called once it is gone. */
  track(work: Promise<void>): void;
  /** Tasks not settled yet: attempts under way or not yet recorded, claims being given back. */
  readonly size: number;
  /** The tasks under way now. */
  pending(): Promise<void>[];
}

/**
 * What the dispatcher has started and not seen end: what close() drains, and what bounds new
 * claims while recordings fall behind. Owns only the set of tasks.
 */
export function createTrackedWork(settled: () => void): TrackedWork {
  const tasks = new Set<Promise<void>>();
  return {
    track(work) {
      // `settled` runs once the task is gone: one woken before would still count it against the
      // bound on attempts not yet recorded, and might then sleep until the next poll.
      const task = work.finally(() => {
        tasks.delete(task);
        settled();
      });
      tasks.add(task);
    },
    get size() {
      return tasks.size;
    },
    pending: () => [...tasks],
  };
}

/** Waits for the promises (which never reject) to settle, or for `ms`, whichever comes first. */
export async function settledWithin(promises: readonly Promise<unknown>[], ms: number): Promise<void> {
  if (promises.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  try {
    await Promise.race([Promise.allSettled(promises), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
