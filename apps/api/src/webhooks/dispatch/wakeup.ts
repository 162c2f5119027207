/** Why a sleep ended: its time ran out, or a wake() (and the reason given to the first one). */
export type WakeReason = 'timeout' | 'woken' | 'nudged';

export interface Wakeup {
  /**
   * Ends the sleep under way, or when none is, makes the next one return at once. `nudged` (events
   * may be waiting) outranks `woken` (a delivery finished) when several wakes pile up.
   */
  wake(reason?: 'woken' | 'nudged'): void;
  /** Resolves after `ms`, or at the first wake(), with the reason. */
  sleep(ms: number): Promise<WakeReason>;
}

/**
 * The dispatcher loop's sleep between rounds: the poll interval, cut short by a create's nudge or a
 * finished delivery. Owns only the pending wake and the timer.
 */
export function createWakeup(): Wakeup {
  let pending: WakeReason | undefined;
  let interrupt: ((reason: WakeReason) => void) | undefined;
  return {
    wake(reason = 'woken') {
      if (interrupt) interrupt(reason);
      else if (pending !== 'nudged') pending = reason;
    },
    sleep(ms) {
      if (pending !== undefined) {
        const reason = pending;
        pending = undefined;
        return Promise.resolve(reason);
      }
      return new Promise((resolve) => {
        const done = (reason: WakeReason) => {
          interrupt = undefined;
          clearTimeout(timer);
          resolve(reason);
        };
        // Unreferenced: a dispatcher never closed must not keep the process alive by itself.
        const timer = setTimeout(() => done('timeout'), ms).unref();
        interrupt = done;
      });
    },
  };
}
