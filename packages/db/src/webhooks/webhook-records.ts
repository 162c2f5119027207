/**
 * Webhook records as the repository returns them: plain data, no Prisma types. The shapes the
 * service, the dispatcher and the tests agree on.
 */

/** A subscription, as listed: never its secret. */
export interface WebhookRecord {
  /** A UUID. */
  readonly id: string;
  /** Where events are POSTed: an absolute http(s) URL. */
  readonly url: string;
  readonly description: string | null;
  /** The team that owns it. */
  readonly team: string;
  readonly createdAt: Date;
  /** The event types it receives; `['plant.created']` alone keeps the NewPlant body. */
  readonly eventTypes: readonly string[];
  /** False: no new deliveries, and its pending ones wait until it is enabled again. */
  readonly enabled: boolean;
  /** When and why it was disabled; null while enabled. */
  readonly disabledAt: Date | null;
  readonly disabledReason: string | null;
  /** While a rotation's grace period runs: when the previous secret stops signing; else null. */
  readonly previousSecretExpiresAt: Date | null;
}

/** A subscription as created: the only time its signing secret is shown. */
export interface CreatedWebhook extends WebhookRecord {
  /** Standard Webhooks secret: `whsec_` and the base64 of 32 random bytes. */
  readonly secret: string;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One try at delivering an event to a subscription. */
export interface DeliveryAttemptRecord {
  readonly attemptedAt: Date;
  /** The receiver's HTTP status; null when no response came (refused, timed out, blocked). */
  readonly statusCode: number | null;
  readonly latencyMs: number;
  /** Why it failed, in a short sentence; null for a 2xx. */
  readonly error: string | null;
  /** The start of the receiver's answer body (see RESPONSE_EXCERPT_MAX_BYTES); null or absent when none. */
  readonly responseExcerpt?: string | null;
}

/** An event's delivery to one subscription, with every attempt so far (oldest first). */
export interface DeliveryRecord {
  /** Ascending in creation order (int64). */
  readonly id: bigint;
  readonly webhookId: string;
  /** The `webhook-id` header: `msg_` and a UUID, the same on every attempt and every subscription. */
  readonly eventId: string;
  /** plant.created, plant.updated, plant.deleted or webhook.test. */
  readonly eventType: string;
  /** The plant the event is about; 0 for a webhook.test event (about no plant). */
  readonly plantId: bigint;
  readonly status: DeliveryStatus;
  /** When the next attempt is due (pending only; null otherwise). */
  readonly nextAttemptAt: Date | null;
  readonly createdAt: Date;
  readonly deliveredAt: Date | null;
  readonly attempts: readonly DeliveryAttemptRecord[];
}

export interface DeliveryPage {
  readonly deliveries: DeliveryRecord[];
  /** Whether more deliveries follow the last one. */
  readonly hasMore: boolean;
}

/** A due delivery leased to one dispatcher until `leaseExpiresAt`. */
export interface ClaimedDelivery {
  readonly deliveryId: bigint;
  /** The team that owns its subscription: deliveries are shared fairly between teams too. */
  readonly team: string;
  /** Proves the lease: recordAttempt and releaseClaim do nothing once another claim took over. */
  readonly leaseId: string;
  readonly leaseExpiresAt: Date;
  readonly eventId: string;
  readonly webhookId: string;
  readonly url: string;
  /**
   * The secrets to sign with: the current one, and during a rotation's grace period the previous
   * one too (Standard Webhooks sends one `v1,` signature for each).
   */
  readonly secrets: readonly string[];
  /**
   * The exact JSON body to send: for a `{plant.created}` subscription's plant.created event the
   * NewPlant `{id, name, tag?}`; otherwise the Standard Webhooks envelope `{type, timestamp, data}`.
   * Ids as JSON integers.
   */
  readonly payload: string;
  /**
   * The W3C traceparent of the request that created the plant, when it was traced (else null):
   * the parent of each attempt's span. Stored and returned as is.
   */
  readonly traceParent: string | null;
  /** 1 for the first attempt (attempts recorded so far + 1). */
  readonly attemptNumber: number;
}

/** What one attempt came to, as the dispatcher records it. */
export interface AttemptOutcome extends DeliveryAttemptRecord {
  /** A 2xx: the delivery is done. */
  readonly delivered: boolean;
  /** Not delivered: when to try again, or null to give up (status `failed`). */
  readonly retryAt: Date | null;
}
