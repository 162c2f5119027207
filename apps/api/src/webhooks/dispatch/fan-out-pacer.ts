import type { Database } from '@plant-store/db';
import type { Logger } from '../../logger.js';
import type { Caps } from './caps.js';
import { createTroubleReporter } from './trouble-reporter.js';

/**
 * Shortest time between two checks of which receivers have subscriptions, when events come after
 * a quiet spell (otherwise once a poll interval).
 */
export const RECEIVERS_RECHECK_MS = 100;

export type FanOutStore = Pick<Database, 'fanOutEvents' | 'webhookReceivers'>;

export interface FanOutPacerOptions {
  readonly store: FanOutStore;
  /** How often events are looked for and receivers checked, whatever wakes the loop. */
  readonly pollMs: number;
  readonly log: Logger;
  /** Milliseconds, for the poll and the receivers check. Default Date.now. */
  readonly clock?: () => number;
}

export interface FanOutPacer {
  /** Events may be waiting (nudged, or polled): fan out before the next claim. */
  markDue(): void;
  /**
   * First thing in a round: due again once a poll interval passed without a fan-out (busy with
   * deliveries, the loop may never sleep a whole poll), and which receivers have subscriptions,
   * every poll interval and when events come again after a fan-out that found none.
   */
  prepare(): Promise<void>;
  /** Due, and some receiver it fans out for has fewer than `caps.fanOutAhead` waiting (or none is known). */
  mayFanOut(caps: Caps): boolean;
  /** One statement of at most `caps.fanOutBatch` deliveries; due again if it found events. Never rejects. */
  fanOut(caps: Caps): Promise<void>;
  /** A claim took a delivery's first attempt for `receiver`: one fewer waiting. */
  firstAttemptClaimed(receiver: string): void;
  /**
   * A claim found nothing it may take: each receiver not full when it was made (not in
   * `fullAtClaim`) has nothing waiting.
   */
  nothingClaimed(fullAtClaim: ReadonlySet<string>): void;
  /** Deliveries fanned out for `receiver` and not claimed yet (undefined: not a receiver it knows). */
  waiting(receiver: string): number | undefined;
}

/**
 * Fans out the events not fanned out yet (any replica's: one delivery per subscription, written by
 * the store) only as fast as this process delivers, receiver by receiver. The create writes only
 * its event; the cost of many subscriptions is paid here, off the request's path, and the backlog
 * stays in the events, not in the deliveries.
 *
 * Owns the count of deliveries fanned out and not yet claimed for a first attempt, per receiver
 * (an estimate): once every receiver it fans out for has `fanOutAhead` waiting, it stops until
 * claims take them. A receiver's count goes back to zero when a claim finds nothing it may take
 * while that receiver was not at its cap as the claim was made (other replicas may have sent them).
 * A receiver that hangs, at its cap, holds back only itself: the fan-out goes on while any other
 * has fewer waiting. A receiver with a new subscription joins with none waiting (so the fan-out
 * goes on for it, writing the busy receivers' rows ahead, as beside a hanging one), and one with no
 * subscription left no longer counts.
 */
export function createFanOutPacer({ store, pollMs, log, clock = Date.now }: FanOutPacerOptions): FanOutPacer {
  const trouble = createTroubleReporter(log, 'webhook dispatch cannot fan out events; retrying', clock);
  // Events may be waiting from before this process started (or from replicas that do not dispatch).
  let due = true;
  let lastFanOutAt = 0;
  let receiversCheckedAt = Number.NEGATIVE_INFINITY;
  let foundNone = true;
  /** Per receiver it fans out for: deliveries fanned out and not claimed yet (0: keeps the fan-out going). */
  const aheadByReceiver = new Map<string, number>();

  /** Whether every receiver it fans out for has `ahead` waiting (none known: no). */
  const paced = (ahead: number): boolean => {
    if (aheadByReceiver.size === 0) return false;
    for (const waiting of aheadByReceiver.values()) if (waiting < ahead) return false;
    return true;
  };

  /**
   * One not counted yet (new) joins with none waiting, and one with no subscription left is no
   * longer waited for. A failure is reported as the fan-out's, and the counts stand until the
   * next poll interval.
   */
  async function checkReceivers(): Promise<void> {
    receiversCheckedAt = clock();
    try {
      const receivers = new Set(await store.webhookReceivers());
      for (const receiver of receivers) if (!aheadByReceiver.has(receiver)) aheadByReceiver.set(receiver, 0);
      for (const receiver of aheadByReceiver.keys()) if (!receivers.has(receiver)) aheadByReceiver.delete(receiver);
    } catch (error) {
      trouble.report(error);
    }
  }

  return {
    markDue() {
      due = true;
    },
    async prepare() {
      if (clock() - lastFanOutAt >= pollMs) due = true;
      const sinceCheck = clock() - receiversCheckedAt;
      if (due && (sinceCheck >= pollMs || (foundNone && sinceCheck >= RECEIVERS_RECHECK_MS))) await checkReceivers();
    },
    mayFanOut: (caps) => due && !paced(caps.fanOutAhead),
    async fanOut(caps) {
      due = false;
      try {
        lastFanOutAt = clock();
        const { events, deliveriesByReceiver } = await store.fanOutEvents({ maxDeliveries: caps.fanOutBatch });
        trouble.resolved('webhook dispatch fans out events again');
        foundNone = events === 0;
        for (const [receiver, written] of deliveriesByReceiver) {
          aheadByReceiver.set(receiver, (aheadByReceiver.get(receiver) ?? 0) + written);
        }
        // Some were waiting: more may be (they are fanned out before the next claim).
        if (events > 0) due = true;
      } catch (error) {
        trouble.report(error);
      }
    },
    firstAttemptClaimed(receiver) {
      const waiting = aheadByReceiver.get(receiver);
      if (waiting !== undefined && waiting > 0) aheadByReceiver.set(receiver, waiting - 1);
    },
    nothingClaimed(fullAtClaim) {
      // For a receiver at its cap when the claim was made, because of the cap: its count stands,
      // and paces the fan-out. For any other, what was fanned out for it has been sent, perhaps by
      // other replicas: its count goes back to zero, or it would wait for ever for others' claims.
      for (const receiver of aheadByReceiver.keys()) if (!fullAtClaim.has(receiver)) aheadByReceiver.set(receiver, 0);
    },
    waiting: (receiver) => aheadByReceiver.get(receiver),
  };
}
