import type { AttemptOutcome, ClaimedDelivery, Database } from '@plant-store/db';
import type { Logger } from '../../logger.js';
import { nextAttemptDelay } from '../retry-schedule.js';
import type { PostWebhookResult } from '../safe-http.js';
import { describeClaim } from './describe-claim.js';
import { createTroubleReporter } from './trouble-reporter.js';

/**
 * What became of an attempt: recorded as `delivered`, `retrying` (failed, another is scheduled)
 * or `failed` (failed, no more); `lease-lost` (another dispatcher owns the delivery now, or the
 * webhook was deleted: nothing recorded); `unrecorded` (the database was out of reach: the lease
 * expires and the delivery is attempted again).
 */
export type AttemptResult = 'delivered' | 'retrying' | 'failed' | 'lease-lost' | 'unrecorded';

export type RecordStore = Pick<Database, 'recordAttempt'>;

export interface OutcomeRecorderOptions {
  readonly store: RecordStore;
  /** Delays after attempt 1, 2, ...: length + 1 attempts in all. */
  readonly retryScheduleMs: readonly number[];
  /** Jitter source, [0, 1). */
  readonly random: () => number;
  /** When the next attempt's delay starts from. */
  readonly now: () => Date;
  readonly log: Logger;
  /** Called once per attempt with its result: for metrics. */
  readonly observeAttempt: (result: AttemptResult) => void;
}

/** Records one attempt's outcome (a database failure is reported, not thrown). */
export type RecordOutcome = (claimed: ClaimedDelivery, attemptedAt: Date, result: PostWebhookResult) => Promise<void>;

/**
 * Handles an attempt once its request is over: a 2xx is delivered; anything else is retried on
 * the schedule (with jitter), or failed when none is left. Records it under the claim's lease,
 * says what became of it (`observeAttempt`, a debug line; a warning when a delivery gives up) and
 * reports a database out of reach once a minute, not once an attempt.
 */
export function createOutcomeRecorder(options: OutcomeRecorderOptions): RecordOutcome {
  const { store, retryScheduleMs, random, now, log, observeAttempt } = options;
  const trouble = createTroubleReporter(
    log,
    'webhook attempt could not be recorded; the delivery is retried when its lease expires',
  );
  return async (claimed, attemptedAt, { statusCode, latencyMs, error, responseExcerpt = null }) => {
    const delivered = statusCode !== null && statusCode >= 200 && statusCode < 300;
    const delayMs = delivered ? null : nextAttemptDelay(retryScheduleMs, claimed.attemptNumber, random);
    const retryAt = delayMs === null ? null : new Date(now().getTime() + delayMs);
    const outcome: AttemptOutcome = { attemptedAt, statusCode, latencyMs, error, responseExcerpt, delivered, retryAt };
    const fields = { ...describeClaim(claimed), status: statusCode, latencyMs, error };
    let recorded: boolean;
    try {
      recorded = await store.recordAttempt(claimed, outcome);
      trouble.resolved('webhook attempts are recorded again');
    } catch (failure) {
      trouble.report(failure, fields);
      observeAttempt('unrecorded');
      return;
    }
    if (!recorded) {
      log.debug(fields, 'webhook attempt not recorded: lease lost');
      observeAttempt('lease-lost');
      return;
    }
    const result: AttemptResult = delivered ? 'delivered' : retryAt === null ? 'failed' : 'retrying';
    observeAttempt(result);
    log.debug({ ...fields, outcome: result, retryAt }, 'webhook attempt');
    if (result === 'failed') log.warn(fields, 'webhook delivery failed: no attempts left');
  };
}
