import type { Database, RetentionResult } from '@plant-store/db';
import type { Logger } from '../logger.js';

export interface RetentionJobOptions {
  readonly db: Pick<Database, 'deleteOldWebhookData'>;
  /** Finished deliveries and their events older than this are deleted. */
  readonly olderThanMs: number;
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
  runOnce(): Promise<RetentionResult>;
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

/**
 * Webhook retention: every `intervalMs`, delivered and failed deliveries older than
 * `olderThanMs` (their attempts with them), then events as old with no delivery left, in batches
 * of `batchSize`. Every replica runs it; rows are locked SKIP LOCKED, so two runs at once share
 * the work instead of waiting on each other. A failing run (database unreachable) is logged and
 * tried again at the next interval.
 */
export function startRetentionJob(options: RetentionJobOptions): RetentionJob {
  const { db, log } = options;
  let running: Promise<RetentionResult> | undefined;
  let stopped = false;

  async function run(): Promise<RetentionResult> {
    let deliveries = 0;
    let events = 0;
    for (let batch = 0; batch < options.maxBatchesPerRun && !stopped; batch++) {
      const deleted = await db.deleteOldWebhookData({ olderThanMs: options.olderThanMs, batchSize: options.batchSize });
      deliveries += deleted.deliveries;
      events += deleted.events;
      if (deleted.deliveries < options.batchSize && deleted.events < options.batchSize) break;
    }
    if (deliveries + events > 0)
      log.info({ deliveries, events }, 'webhook retention: deleted old deliveries and events');
    return { deliveries, events };
  }

  function runOnce(): Promise<RetentionResult> {
    running ??= run().finally(() => {
      running = undefined;
    });
    return running;
  }

  const timer = setInterval(() => {
    runOnce().catch((error: unknown) => log.warn({ err: error }, 'webhook retention run failed; retrying later'));
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
