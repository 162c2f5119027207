import { translateError } from '../prisma-errors.js';
import type { SqlRunner } from '../sql-runner.js';
import type { ClaimedDelivery } from './webhook-records.js';

export interface ClaimOptions {
  /** Most deliveries to lease. */
  readonly limit: number;
  /** Most deliveries of one subscription to lease. */
  readonly perWebhookLimit: number;
  /**
   * Most deliveries to one receiver (receiverOrigin of the URL, whatever the subscriptions) to
   * lease, less what `busyReceivers` says the caller has in flight there. Default: no limit.
   */
  readonly perReceiverLimit?: number;
  /** Receivers the caller has deliveries in flight to, and how many. */
  readonly busyReceivers?: ReadonlyMap<string, number>;
  /** How long the lease lasts (database time). */
  readonly leaseMs: number;
  /** Subscriptions to skip. Default: none. */
  readonly excludeWebhookIds?: readonly string[];
  /**
   * Subscriptions the caller has deliveries in flight to, and how many: each gets at most
   * `perWebhookLimit` less that many (so a caller tops up a subscription's slots as they free,
   * rather than waiting for all of them).
   */
  readonly busyWebhooks?: ReadonlyMap<string, number>;
  /**
   * Most deliveries of one team's subscriptions (all its receivers together) to lease, less what
   * `busyTeams` says the caller has in flight for it: one team's hanging receivers cannot take the
   * slots another team's need. Default: no limit.
   */
  readonly perTeamLimit?: number;
  /** Teams the caller has deliveries in flight for, and how many. */
  readonly busyTeams?: ReadonlyMap<string, number>;
}

/**
 * Candidates: per receiver (the origin of a subscription's URL, which many subscriptions may
 * share) with room left (its limit less the caller's deliveries in flight there), its first due
 * pending deliveries whose lease is free or expired, up to that room, along the partial
 * (receiver, next_attempt_at) index. So a backlog of thousands for one receiver costs no more
 * than that many rows, however many subscriptions point at it; no receiver's backlog starves
 * another; and a receiver with no room left costs no index scan at all. A receiver that hangs
 * behind five subscriptions holds its own share of the slots, not all of them. The scan passes
 * over the deliveries of excluded subscriptions and of subscriptions with no room left
 * (`perWebhookLimit` less the caller's in flight to it); one with some room left keeps that many
 * of what the scan found, soonest first (so a claim can find fewer than the room when one
 * subscription's deliveries come first). Deliveries due at the same instant, as one fan-out's
 * are, come in the index's order: deliveries are not ordered, and a tie-break on id here would
 * sort every tie group. The soonest due of them, `limit` at most, are then locked `FOR UPDATE
 * SKIP LOCKED`, by primary key (their ids as an array, in a materialized step: given the
 * chance, a planner trusting statistics taken when little was pending walks the whole pending
 * index to find them, 83 ms a claim at 12,000 waiting): a row another dispatcher is claiming is
 * skipped, not waited for, and one it claimed after this statement's snapshot fails the
 * conditions, checked on the locked row. Each gets its own lease id, and a lease end in
 * database time (`now()`), so that replicas with skewed clocks agree on when it expires.
 *
 * Teams share the slots as receivers do: of the candidates left, each team (the owner of the
 * delivery's subscription) keeps at most its room (`perTeamLimit` less the caller's deliveries in
 * flight for it), soonest first, so one team's many hanging receivers hold that team's share of the
 * slots, never every slot.
 */
export const CLAIM_DELIVERIES_SQL = `WITH receivers AS (
  SELECT receivers.origin, coalesce(busy.room, $5::int) AS room
  FROM (
    SELECT DISTINCT subscriptions.receiver AS origin
    FROM public.webhook_subscriptions AS subscriptions
  ) AS receivers
  LEFT JOIN unnest($6::text[], $7::int[]) AS busy (origin, room) ON busy.origin = receivers.origin
), webhook_rooms AS (
  SELECT busy_webhooks.id, greatest(0, $2::int - busy_webhooks.in_flight) AS room
  FROM unnest($8::text[], $9::int[]) AS busy_webhooks (id, in_flight)
), due AS (
  SELECT due.id, due.subscription_id, due.next_attempt_at
  FROM receivers
  CROSS JOIN LATERAL (
    SELECT due_deliveries.id, due_deliveries.subscription_id, due_deliveries.next_attempt_at
    FROM public.webhook_deliveries AS due_deliveries
    WHERE due_deliveries.receiver = receivers.origin
      AND due_deliveries.status = 'pending'
      AND due_deliveries.next_attempt_at <= now()
      AND (due_deliveries.locked_until IS NULL OR due_deliveries.locked_until <= now())
      AND due_deliveries.subscription_id <> ALL ($3::text[]::uuid[])
      AND due_deliveries.subscription_id::text <> ALL (ARRAY(SELECT webhook_rooms.id FROM webhook_rooms WHERE webhook_rooms.room = 0))
    ORDER BY due_deliveries.next_attempt_at
    LIMIT greatest(0, receivers.room)
  ) AS due
), ranked AS (
  SELECT due.id, due.next_attempt_at, subscriptions.team,
    row_number() OVER (PARTITION BY due.subscription_id ORDER BY due.next_attempt_at, due.id) AS place,
    coalesce(webhook_rooms.room, $2::int) AS room
  FROM due
  JOIN public.webhook_subscriptions AS subscriptions ON subscriptions.id = due.subscription_id
  LEFT JOIN webhook_rooms ON webhook_rooms.id = due.subscription_id::text
), team_ranked AS (
  SELECT ranked.id, ranked.next_attempt_at,
    row_number() OVER (PARTITION BY ranked.team ORDER BY ranked.next_attempt_at, ranked.id) AS team_place,
    greatest(0, coalesce($10::int - busy_teams.in_flight, $10::int)) AS team_room
  FROM ranked
  LEFT JOIN unnest($11::text[], $12::int[]) AS busy_teams (team, in_flight) ON busy_teams.team = ranked.team
  WHERE ranked.place <= ranked.room
), candidates AS (
  SELECT team_ranked.id FROM team_ranked
  WHERE team_ranked.team_place <= team_ranked.team_room
  ORDER BY team_ranked.next_attempt_at, team_ranked.id
  LIMIT $1::int
), locked AS MATERIALIZED (
  SELECT candidate.id, candidate.status, candidate.next_attempt_at, candidate.locked_until
  FROM public.webhook_deliveries AS candidate
  WHERE candidate.id = ANY (ARRAY(SELECT candidates.id FROM candidates))
  FOR UPDATE SKIP LOCKED
), claimed AS (
  UPDATE public.webhook_deliveries AS deliveries
  SET locked_until = now() + $4::int * interval '1 millisecond', lease_id = gen_random_uuid()
  WHERE deliveries.id IN (
    SELECT locked.id FROM locked
    WHERE locked.status = 'pending'
      AND locked.next_attempt_at <= now()
      AND (locked.locked_until IS NULL OR locked.locked_until <= now())
  )
  RETURNING deliveries.id, deliveries.lease_id, deliveries.locked_until, deliveries.event_id,
    deliveries.subscription_id, deliveries.attempt_count, deliveries.next_attempt_at
)
SELECT claimed.id::text AS id, claimed.lease_id::text AS lease_id, claimed.locked_until,
  claimed.event_id, claimed.subscription_id::text AS webhook_id, subscriptions.team, subscriptions.url, subscriptions.secret,
  CASE WHEN subscriptions.previous_secret_expires_at > now() THEN subscriptions.previous_secret END AS previous_secret,
  CASE WHEN events.type = 'plant.created' AND subscriptions.event_types = ARRAY['plant.created']::text[]
    THEN events.payload ELSE events.envelope END AS payload,
  events.trace_parent, claimed.attempt_count + 1 AS attempt_number
FROM claimed
JOIN public.webhook_events AS events ON events.id = claimed.event_id
JOIN public.webhook_subscriptions AS subscriptions ON subscriptions.id = claimed.subscription_id
ORDER BY claimed.next_attempt_at, claimed.id`;

interface ClaimedRow {
  readonly id: string;
  readonly lease_id: string;
  readonly locked_until: Date;
  readonly event_id: string;
  readonly webhook_id: string;
  readonly team: string;
  readonly url: string;
  readonly secret: string;
  readonly previous_secret: string | null;
  readonly payload: string;
  readonly trace_parent: string | null;
  readonly attempt_number: number;
}

/**
 * Leases due deliveries to the caller, soonest due first (see CLAIM_DELIVERIES_SQL). One
 * statement, one transaction: no two claims, in this process or any other, ever lease the
 * same delivery while its lease runs. Through the driver, not Prisma: every dispatcher polls
 * with it, and is nudged to after every create.
 */
export async function claimDeliveries(sql: SqlRunner, options: ClaimOptions): Promise<ClaimedDelivery[]> {
  if (options.limit <= 0) return [];
  const perReceiver = options.perReceiverLimit ?? options.limit;
  const busy = [...(options.busyReceivers ?? new Map<string, number>())];
  const busyWebhooks = [...(options.busyWebhooks ?? new Map<string, number>())];
  const perTeam = options.perTeamLimit ?? options.limit;
  const busyTeams = [...(options.busyTeams ?? new Map<string, number>())];
  let rows: ClaimedRow[];
  try {
    ({ rows } = await sql.query<ClaimedRow>(CLAIM_DELIVERIES_SQL, [
      options.limit,
      options.perWebhookLimit,
      [...(options.excludeWebhookIds ?? [])],
      Math.ceil(options.leaseMs),
      perReceiver,
      busy.map(([origin]) => origin),
      busy.map(([, inFlight]) => Math.max(0, perReceiver - inFlight)),
      busyWebhooks.map(([id]) => id),
      busyWebhooks.map(([, inFlight]) => inFlight),
      perTeam,
      busyTeams.map(([team]) => team),
      busyTeams.map(([, inFlight]) => inFlight),
    ]));
  } catch (error) {
    throw translateError(error);
  }
  return rows.map((row) => ({
    deliveryId: BigInt(row.id),
    team: row.team,
    leaseId: row.lease_id,
    leaseExpiresAt: row.locked_until,
    eventId: row.event_id,
    webhookId: row.webhook_id,
    url: row.url,
    secrets: row.previous_secret === null ? [row.secret] : [row.secret, row.previous_secret],
    payload: row.payload,
    traceParent: row.trace_parent,
    attemptNumber: row.attempt_number,
  }));
}
