import type { RetentionOptions, RetentionResult } from '@plant-store/db';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { startRetentionJob } from './retention-job.js';

/** A store with `deliveries` and `events` old rows to delete, recording each call. */
function oldRows(deliveries: number, events: number) {
  const calls: RetentionOptions[] = [];
  const left = { deliveries, events };
  return {
    calls,
    left,
    async deleteOldWebhookData(options: RetentionOptions): Promise<RetentionResult> {
      calls.push(options);
      const deleted = {
        deliveries: Math.min(options.batchSize, left.deliveries),
        events: Math.min(options.batchSize, left.events),
      };
      left.deliveries -= deleted.deliveries;
      left.events -= deleted.events;
      return deleted;
    },
  };
}

const log = createLogger({ level: 'silent' });

describe('startRetentionJob', () => {
  it('works off the old rows in batches until a batch comes back short', async () => {
    const db = oldRows(1_050, 400);
    const job = startRetentionJob({
      name: 'webhook retention',
      deleteBatch: async (batchSize) => ({ ...(await db.deleteOldWebhookData({ olderThanMs: 1_000, batchSize })) }),
      intervalMs: 60_000,
      batchSize: 500,
      maxBatchesPerRun: 20,
      log,
    });
    expect(await job.runOnce()).toEqual({ deliveries: 1_050, events: 400 });
    expect(db.calls).toHaveLength(3);
    expect(db.calls.every((call) => call.olderThanMs === 1_000 && call.batchSize === 500)).toBe(true);
    await job.stop();
  });

  it('leaves a large backlog to later runs past maxBatchesPerRun', async () => {
    const db = oldRows(10_000, 0);
    const job = startRetentionJob({
      name: 'webhook retention',
      deleteBatch: async (batchSize) => ({ ...(await db.deleteOldWebhookData({ olderThanMs: 1_000, batchSize })) }),
      intervalMs: 60_000,
      batchSize: 100,
      maxBatchesPerRun: 5,
      log,
    });
    expect(await job.runOnce()).toEqual({ deliveries: 500, events: 0 });
    expect(db.left.deliveries).toBe(9_500);
    await job.stop();
  });
});
