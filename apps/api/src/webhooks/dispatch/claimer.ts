import type { ClaimedDelivery, Database } from '@plant-store/db';
import type { Logger } from '../../logger.js';
import type { Caps } from './caps.js';
import { describeClaim } from './describe-claim.js';
import { createTroubleReporter } from './trouble-reporter.js';

/** A waiting claim starts no later than this before its lease ends, less an attempt's timeout. */
export const LEASE_MARGIN_MS = 1_000;

export type ClaimStore = Pick<Database, 'claimDeliveries' | 'releaseClaim'>;

/** Claims held here (waiting or being sent), per webhook, receiver and team: what a claim leaves out. */
export interface HeldClaims {
  readonly byWebhook: ReadonlyMap<string, number>;
  readonly byReceiver: ReadonlyMap<string, number>;
  readonly byTeam: ReadonlyMap<string, number>;
}

/** What one claim statement leased, and what the dispatcher needs to know of it. */
export interface ClaimBatch {
  readonly claims: ClaimedDelivery[];
  /**
   * Receivers at their cap as the claim was made (deliveries finishing during its round trip free
   * room it could not have used): nothing of theirs came, for that reason.
   */
  readonly fullAtClaim: ReadonlySet<string>;
  /** When each must start by (its lease, less an attempt's timeout and a margin), or be given back. */
  readonly startBy: number;
}

export interface ClaimerOptions {
  readonly store: ClaimStore;
  readonly leaseMs: number;
  readonly timeoutMs: number;
  readonly log: Logger;
  /** Milliseconds, for `startBy`. Default Date.now. */
  readonly clock?: () => number;
}

export interface Claimer {
  /** The next round claims whatever the finished count says: nudged, polled, or the last claim was full. */
  claimAnyway(): void;
  /** A delivery's request is over (its slot free). */
  deliveryFinished(): void;
  /**
   * Whether a round with room should claim: asked to, or `caps.claimAfter` deliveries finished
   * since the last claim (each claim is a statement that scans every receiver with room: fewer,
   * larger claims leave the database to the creates).
   */
  due(caps: Caps): boolean;
  /** Leases up to `limit` due deliveries within `caps`, less what is `held`; null when the store failed (reported). */
  claim(limit: number, caps: Caps, held: HeldClaims): Promise<ClaimBatch | null>;
  /** Hands a claim back for any dispatcher to take at once; never rejects (the lease then runs out). */
  release(claimed: ClaimedDelivery): Promise<void>;
}

/**
 * Takes leases on due deliveries from the store (every replica claims; none sends what another
 * holds), and gives them back. Owns when to claim (the count of deliveries finished since the last
 * claim) and what a claim asks for: `lookAhead` claims per webhook, receiver and team cap, less those
 * held here, so that a freed slot starts the next delivery at once, not after a claim's round trip.
 */
export function createClaimer({ store, leaseMs, timeoutMs, log, clock = Date.now }: ClaimerOptions): Claimer {
  const trouble = createTroubleReporter(log, 'webhook dispatch cannot claim deliveries; retrying', clock);
  let anyway = true;
  let finished = 0;
  return {
    claimAnyway() {
      anyway = true;
    },
    deliveryFinished() {
      finished += 1;
    },
    due: (caps) => finished >= caps.claimAfter || anyway,
    async claim(limit, caps, held) {
      anyway = false;
      finished = 0;
      // Its cap, or its one webhook's when that is lower.
      const receiverFull = caps.lookAhead * Math.min(caps.perReceiver, caps.perWebhook);
      const fullAtClaim = new Set<string>();
      for (const [receiver, count] of held.byReceiver) if (count >= receiverFull) fullAtClaim.add(receiver);
      let claims: ClaimedDelivery[];
      try {
        claims = await store.claimDeliveries({
          limit,
          perWebhookLimit: caps.lookAhead * caps.perWebhook,
          perReceiverLimit: caps.lookAhead * caps.perReceiver,
          perTeamLimit: caps.lookAhead * caps.perTeam,
          busyReceivers: held.byReceiver,
          busyWebhooks: held.byWebhook,
          busyTeams: held.byTeam,
          leaseMs,
        });
        trouble.resolved('webhook dispatch claims deliveries again');
      } catch (error) {
        trouble.report(error);
        return null;
      }
      const startBy = clock() + leaseMs - timeoutMs - Math.min(LEASE_MARGIN_MS, (leaseMs - timeoutMs) / 2);
      return { claims, fullAtClaim, startBy };
    },
    async release(claimed) {
      try {
        await store.releaseClaim(claimed);
      } catch (error) {
        // The lease then simply runs out.
        log.debug({ err: error, ...describeClaim(claimed) }, 'webhook claim could not be released');
      }
    },
  };
}
