import { translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';
import type { AttemptOutcome, ClaimedDelivery, DeliveryStatus } from './webhook-records.js';

/** Longest error text kept per attempt: a sentence, not a receiver's whole response. */
const MAX_ERROR_LENGTH = 1_000;
/** The latency column is an int4. */
const MAX_INT32 = 2_147_483_647;

/**
 * One statement: the delivery's update applies only while the claim's lease is still on it
 * (another claim replaced it once it expired, a resend cleared it, or the delivery went with its
 * subscription); the attempt row is written only for an update that applied. READ COMMITTED
 * re-checks `lease_id` on the row's latest version, so a lease taken over concurrently fails
 * it. The lease is given back with it.
 */
export const RECORD_ATTEMPT_SQL = `WITH updated AS (
  UPDATE public.webhook_deliveries
  SET status = $3::text,
    attempt_count = attempt_count + 1,
    next_attempt_at = $4::timestamptz,
    delivered_at = CASE WHEN $3::text = 'delivered' THEN now() END,
    locked_until = NULL,
    lease_id = NULL
  WHERE id = $1::text::bigint AND lease_id = $2::uuid
  RETURNING id
), attempt AS (
  INSERT INTO public.webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, error)
  SELECT id, $5::timestamptz, $6::int, $7::int, $8::text FROM updated
)
SELECT count(*)::int AS applied FROM updated`;

const RELEASE_CLAIM_SQL = `UPDATE public.webhook_deliveries
SET locked_until = NULL, lease_id = NULL
WHERE id = $1::text::bigint AND lease_id = $2::uuid`;

/**
 * Records an attempt made under `claim` and what it leads to: delivered (done), pending again
 * at `outcome.retryAt`, or failed (no retry left). False, and nothing written, when the lease
 * was lost: the attempt then counts for nothing here, and whoever holds the delivery now tries
 * it again (at-least-once).
 */
export async function recordAttempt(sql: SqlRunner, claim: ClaimedDelivery, outcome: AttemptOutcome): Promise<boolean> {
  const status: DeliveryStatus = outcome.delivered ? 'delivered' : outcome.retryAt === null ? 'failed' : 'pending';
  const retryAt = status === 'pending' ? outcome.retryAt : null;
  try {
    const { rows } = await sql.query<{ applied: number }>(RECORD_ATTEMPT_SQL, [
      claim.deliveryId.toString(),
      claim.leaseId,
      status,
      retryAt?.toISOString() ?? null,
      outcome.attemptedAt.toISOString(),
      outcome.statusCode,
      Math.min(MAX_INT32, Math.max(0, Math.round(outcome.latencyMs))),
      outcome.error?.slice(0, MAX_ERROR_LENGTH) ?? null,
    ]);
    return (rows[0]?.applied ?? 0) > 0;
  } catch (error) {
    throw translateError(error);
  }
}

/** Gives the lease back without an attempt (shutdown): the delivery is due again at once. */
export async function releaseClaim(sql: SqlRunner, claim: ClaimedDelivery): Promise<void> {
  try {
    await sql.query(RELEASE_CLAIM_SQL, [claim.deliveryId.toString(), claim.leaseId]);
  } catch (error) {
    throw translateError(error);
  }
}
