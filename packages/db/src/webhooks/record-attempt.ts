import { translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';
import type { AttemptOutcome, ClaimedDelivery, DeliveryStatus } from './webhook-records.js';

/** Longest error text kept per attempt: a sentence, not a receiver's whole response. */
const MAX_ERROR_LENGTH = 1_000;
/** A bound on the excerpt kept (the dispatcher keeps 256 bytes, at most 256 UTF-16 units). */
const MAX_EXCERPT_LENGTH = 1_000;
/** The latency column is an int4. */
const MAX_INT32 = 2_147_483_647;

/**
 * One statement for a batch of attempts (arrays, one element per attempt, each delivery once):
 * a delivery's update applies only while the claim's lease is still on it (another claim
 * replaced it once it expired, a resend cleared it, or the delivery went with its
 * subscription); an attempt row is written only for an update that applied. READ COMMITTED
 * re-checks `lease_id` on the row's latest version, so a lease taken over concurrently fails
 * it. The lease is given back with it. Returns the ids whose update applied.
 *
 * Each subscription's health follows in the same statement: an attempt delivered clears its
 * `failing_since`; a failed one sets it (the first failure since the last success). One whose
 * every attempt has failed for `$10` milliseconds (0: never) is disabled there and then, `$11`
 * and since when its reason: its pending deliveries wait (the migration's trigger), and it gets no
 * new events until its owner enables it again. Only a change is written: a healthy subscription's
 * deliveries cost no write of it.
 */
export const RECORD_ATTEMPTS_SQL = `WITH input AS (
  SELECT *
  FROM unnest($1::text[]::bigint[], $2::uuid[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::int[], $7::int[], $8::text[], $9::text[])
    AS input (id, lease_id, status, next_attempt_at, attempted_at, status_code, latency_ms, error, response_excerpt)
), updated AS (
  UPDATE public.webhook_deliveries AS deliveries
  SET status = input.status,
    attempt_count = deliveries.attempt_count + 1,
    next_attempt_at = input.next_attempt_at,
    delivered_at = CASE WHEN input.status = 'delivered' THEN now() END,
    locked_until = NULL,
    lease_id = NULL
  FROM input
  WHERE deliveries.id = input.id AND deliveries.lease_id = input.lease_id
  RETURNING deliveries.id, deliveries.subscription_id
), attempts AS (
  INSERT INTO public.webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, error, response_excerpt)
  SELECT input.id, input.attempted_at, input.status_code, input.latency_ms, input.error, input.response_excerpt
  FROM input JOIN updated ON updated.id = input.id
), outcomes AS (
  SELECT updated.subscription_id, bool_or(input.status = 'delivered') AS delivered,
    min(input.attempted_at) AS first_failure
  FROM updated JOIN input ON input.id = updated.id
  GROUP BY updated.subscription_id
), judged AS (
  SELECT outcomes.*, coalesce(subscriptions.failing_since, outcomes.first_failure) AS failing_since,
    NOT outcomes.delivered AND $10::bigint > 0 AND subscriptions.enabled
      AND coalesce(subscriptions.failing_since, outcomes.first_failure) <= now() - $10::bigint * interval '1 millisecond' AS disable
  FROM outcomes JOIN public.webhook_subscriptions AS subscriptions ON subscriptions.id = outcomes.subscription_id
  WHERE (outcomes.delivered AND subscriptions.failing_since IS NOT NULL)
    OR (NOT outcomes.delivered AND (subscriptions.failing_since IS NULL OR subscriptions.enabled))
), health AS (
  UPDATE public.webhook_subscriptions AS subscriptions
  SET failing_since = CASE WHEN judged.delivered THEN NULL ELSE judged.failing_since END,
    enabled = subscriptions.enabled AND NOT judged.disable,
    disabled_at = CASE WHEN judged.disable THEN now() ELSE subscriptions.disabled_at END,
    disabled_reason = CASE WHEN judged.disable
      THEN $11::text || ' (since ' || to_char(judged.failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || ')'
      ELSE subscriptions.disabled_reason END
  FROM judged
  WHERE subscriptions.id = judged.subscription_id
    AND (judged.disable OR subscriptions.failing_since IS DISTINCT FROM (CASE WHEN judged.delivered THEN NULL ELSE judged.failing_since END))
)
SELECT id::text AS id FROM updated`;

const RELEASE_CLAIM_SQL = `UPDATE public.webhook_deliveries
SET locked_until = NULL, lease_id = NULL
WHERE id = $1::text::bigint AND lease_id = $2::uuid`;

export interface RecordedAttempt {
  readonly claim: ClaimedDelivery;
  readonly outcome: AttemptOutcome;
}

/**
 * Records attempts made under their claims and what each leads to: delivered (done), pending
 * again at `outcome.retryAt`, or failed (no retry left); one statement for all of them. For
 * each, in order, whether it was recorded: false, and nothing written for it, when its lease was
 * lost (the attempt then counts for nothing here, and whoever holds the delivery now tries it
 * again: at-least-once).
 */
/** When a subscription is disabled for failing: every attempt failed for `afterMs` (0: never). */
export interface DisableFailingOptions {
  readonly afterMs: number;
}

/** The reason a subscription disabled for failing shows, before since when. */
export function failingReason(afterMs: number): string {
  const days = afterMs / 86_400_000;
  const period = days >= 1 ? `${Number(days.toFixed(2))} days` : `${Math.round(afterMs / 1000)} s`;
  return `disabled by the service: every delivery attempt failed for ${period}`;
}

export async function recordAttempts(
  sql: SqlRunner,
  attempts: readonly RecordedAttempt[],
  disable: DisableFailingOptions = { afterMs: 0 },
): Promise<boolean[]> {
  if (attempts.length === 0) return [];
  const columns = {
    ids: [] as string[],
    leases: [] as string[],
    statuses: [] as DeliveryStatus[],
    retries: [] as (string | null)[],
    attemptedAt: [] as string[],
    statusCodes: [] as (number | null)[],
    latencies: [] as number[],
    errors: [] as (string | null)[],
    excerpts: [] as (string | null)[],
  };
  for (const { claim, outcome } of attempts) {
    const status: DeliveryStatus = outcome.delivered ? 'delivered' : outcome.retryAt === null ? 'failed' : 'pending';
    columns.ids.push(claim.deliveryId.toString());
    columns.leases.push(claim.leaseId);
    columns.statuses.push(status);
    columns.retries.push(status === 'pending' ? (outcome.retryAt?.toISOString() ?? null) : null);
    columns.attemptedAt.push(outcome.attemptedAt.toISOString());
    columns.statusCodes.push(outcome.statusCode);
    columns.latencies.push(Math.min(MAX_INT32, Math.max(0, Math.round(outcome.latencyMs))));
    columns.errors.push(outcome.error?.slice(0, MAX_ERROR_LENGTH) ?? null);
    columns.excerpts.push(keptExcerpt(outcome.responseExcerpt));
  }
  try {
    const { rows } = await sql.query<{ id: string }>(RECORD_ATTEMPTS_SQL, [
      columns.ids,
      columns.leases,
      columns.statuses,
      columns.retries,
      columns.attemptedAt,
      columns.statusCodes,
      columns.latencies,
      columns.errors,
      columns.excerpts,
      Math.max(0, Math.round(disable.afterMs)),
      failingReason(disable.afterMs),
    ]);
    const applied = new Set(rows.map((row) => row.id));
    return columns.ids.map((id) => applied.has(id));
  } catch (error) {
    throw translateError(error);
  }
}

/**
 * The excerpt as the column keeps it: null for none or empty; NUL (which a text column cannot
 * hold) as U+FFFD; never longer than the dispatcher's bound, should a caller pass more.
 */
function keptExcerpt(excerpt: string | null | undefined): string | null {
  if (excerpt === undefined || excerpt === null || excerpt === '') return null;
  return excerpt.slice(0, MAX_EXCERPT_LENGTH).replaceAll('\u0000', '\uFFFD');
}

/** Records one attempt (see recordAttempts). */
export async function recordAttempt(
  sql: SqlRunner,
  claim: ClaimedDelivery,
  outcome: AttemptOutcome,
  disable?: DisableFailingOptions,
): Promise<boolean> {
  const [recorded] = await recordAttempts(sql, [{ claim, outcome }], disable);
  return recorded ?? false;
}

interface QueuedAttempt extends RecordedAttempt {
  readonly resolve: (recorded: boolean) => void;
  readonly reject: (error: unknown) => void;
}

export interface AttemptRecorder {
  /** Records the attempt with others that finished meanwhile (see recordAttempts). */
  record(claim: ClaimedDelivery, outcome: AttemptOutcome): Promise<boolean>;
}

export interface AttemptRecorderOptions {
  /** Most attempts one statement records. */
  readonly maxBatchSize: number;
  /**
   * How long a statement waits, once there is something to record, for more attempts to join
   * it (unless a quarter of `maxBatchSize` are waiting). Default 0: it goes at once.
   */
  readonly lingerMs?: number;
  /** When a failing subscription is disabled (see recordAttempts). Default: never. */
  readonly disableFailing?: DisableFailingOptions;
}

/**
 * Group commit for attempts: one statement in flight; attempts that finish meanwhile wait and go
 * together in the next one (at most `maxBatchSize`), and with `lingerMs` each statement waits that
 * long for more to join it. A dispatcher finishing hundreds of deliveries a second writes a
 * handful of statements instead of one each, even with one delivery in flight at a time. A failed
 * statement fails every attempt in it (their leases expire and they are attempted again).
 */
export function createAttemptRecorder(sql: SqlRunner, options: AttemptRecorderOptions): AttemptRecorder {
  const lingerMs = options.lingerMs ?? 0;
  const queue: QueuedAttempt[] = [];
  let writing = false;

  async function drain(): Promise<void> {
    writing = true;
    try {
      while (queue.length > 0) {
        // A quarter of a batch waiting already: it goes at once (at thousands a second, a
        // linger would only cap the rate).
        if (lingerMs > 0 && queue.length < options.maxBatchSize / 4) {
          await new Promise((resolve) => setTimeout(resolve, lingerMs));
        }
        const batch = takeBatch(queue.splice(0, options.maxBatchSize), queue);
        try {
          const recorded = await recordAttempts(sql, batch, options.disableFailing);
          for (const [index, item] of batch.entries()) item.resolve(recorded[index] ?? false);
        } catch (error) {
          for (const item of batch) item.reject(error);
        }
      }
    } finally {
      writing = false;
    }
  }

  return {
    record(claim, outcome) {
      return new Promise<boolean>((resolve, reject) => {
        queue.push({ claim, outcome, resolve, reject });
        if (!writing) void drain();
      });
    },
  };
}

/**
 * A delivery appears at most once per statement (its update would otherwise apply twice): a
 * repeat (a lease given up and claimed again within one batch: not expected) waits for the next.
 */
function takeBatch(taken: QueuedAttempt[], rest: QueuedAttempt[]): QueuedAttempt[] {
  const seen = new Set<bigint>();
  const batch: QueuedAttempt[] = [];
  const later: QueuedAttempt[] = [];
  for (const item of taken) {
    if (seen.has(item.claim.deliveryId)) later.push(item);
    else {
      seen.add(item.claim.deliveryId);
      batch.push(item);
    }
  }
  rest.unshift(...later);
  return batch;
}

/** Gives the lease back without an attempt (shutdown): the delivery is due again at once. */
export async function releaseClaim(sql: SqlRunner, claim: ClaimedDelivery): Promise<void> {
  try {
    await sql.query(RELEASE_CLAIM_SQL, [claim.deliveryId.toString(), claim.leaseId]);
  } catch (error) {
    throw translateError(error);
  }
}
