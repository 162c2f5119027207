import type { Logger } from '../logger.js';

/** Rows deleted, by kind (`deliveries`, `events`, `auditEvents`...). */
export type Deleted = Readonly<Record<string, number>>;

export interface RetentionJobOptions {
  /** What the log line names: `webhook retention`, `audit log retention`. */
  readonly name: string;
  /**
   * Deletes one batch of rows past their retention period (at most `batchSize` of each kind) and
   * says how many of each kind went.
   */
  readonly deleteBatch: (batchSize: number) => Promise<Deleted>;
  /** How often the job runs. */
  readonly intervalMs: number;
  /** Rows of each kind per statement: short transactions, nothing locked for long. */
  readonly batchSize: number;
  /** Most batches per run: a large backlog is worked off over several runs. */
  readonly maxBatchesPerRun: number;
  readonly log: Logger;
}

export interface RetentionJob {
  /** Runs the job now (batches until the old rows are gone or the run's cap); what it deleted. */
  runOnce(): Promise<Deleted>;
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

/**
 * A retention job: every `intervalMs`, batches of `batchSize` old rows of each kind until a batch
 * comes back short of every kind (or `maxBatchesPerRun`). Every replica runs it; rows are locked
 * SKIP LOCKED, so two runs at once share the work instead of waiting on each other. A failing run
 * (database unreachable) is logged and tried again at the next interval.
 */
export function startRetentionJob(options: RetentionJobOptions): RetentionJob {
  const { log, batchSize } = options;
  let running: Promise<Deleted> | undefined;
  let stopped = false;

  async function run(): Promise<Deleted> {
    const totals: Record<string, number> = {};
    for (let batch = 0; batch < options.maxBatchesPerRun && !stopped; batch++) {
      const deleted = await options.deleteBatch(batchSize);
      for (const [kind, count] of Object.entries(deleted)) totals[kind] = (totals[kind] ?? 0) + count;
      if (Object.values(deleted).every((count) => count < batchSize)) break;
    }
    if (Object.values(totals).some((count) => count > 0)) log.info(totals, `${options.name}: deleted old rows`);
    return totals;
  }

  function runOnce(): Promise<Deleted> {
    running ??= run().finally(() => {
      running = undefined;
    });
    return running;
  }

  const timer = setInterval(() => {
    runOnce().catch((error: unknown) => log.warn({ err: error }, `${options.name} run failed; retrying later`));
  }, options.intervalMs);
  timer.unref();

  return {
    runOnce,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
