-- Plants that change, events of every kind, and a feed to catch up from.

-- Every create and update takes a version from one sequence: versions never repeat for an id,
-- across a delete and a re-create too. Existing plants get theirs now (the default is
-- evaluated per row).
CREATE SEQUENCE "plant_versions" AS BIGINT;

-- AlterTable
ALTER TABLE "plants" ADD COLUMN     "version" BIGINT NOT NULL DEFAULT nextval('plant_versions'::regclass);

-- Events: their type, the plant's version, the Standard Webhooks envelope, and their place in
-- the feed, (txid, seq): the writing transaction's id and a sequence. The feed lists only events
-- whose transaction is older than every transaction still running (pg_snapshot_xmin), in
-- (txid, seq) order: an event that shows up later always sorts after every event already listed
-- (see list-events.ts).
ALTER TABLE "webhook_events" ADD COLUMN     "envelope" TEXT,
ADD COLUMN     "seq" BIGSERIAL NOT NULL,
ADD COLUMN     "txid" xid8 NOT NULL DEFAULT pg_current_xact_id(),
ADD COLUMN     "type" VARCHAR(32) NOT NULL DEFAULT 'plant.created',
ADD COLUMN     "version" BIGINT;

-- The events written before: plant.created, their body as it was, wrapped in the envelope the
-- feed shows (no version: versions did not exist).
UPDATE "webhook_events" SET "envelope" = '{"type":"plant.created","timestamp":"'
  || to_char("created_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '","data":' || "payload" || '}';
ALTER TABLE "webhook_events" ALTER COLUMN "envelope" SET NOT NULL;

-- AlterTable
ALTER TABLE "webhook_subscriptions" ADD COLUMN     "disabled_at" TIMESTAMPTZ(3),
ADD COLUMN     "disabled_reason" TEXT,
ADD COLUMN     "enabled" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN     "event_types" TEXT[] NOT NULL DEFAULT ARRAY['plant.created']::TEXT[],
ADD COLUMN     "failing_since" TIMESTAMPTZ(3),
ADD COLUMN     "previous_secret" TEXT,
ADD COLUMN     "previous_secret_expires_at" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "webhook_events_feed_idx" ON "webhook_events"("txid", "seq");

-- A disabled subscription's pending deliveries wait: claims scan deliveries by receiver, so they
-- carry none while it is disabled, and its receiver again once it is enabled. Whoever changes
-- `enabled` (the service, an operator in SQL), and whatever writes a pending delivery without a
-- receiver (a resend, a previous version's fan-out), gets the same.
CREATE OR REPLACE FUNCTION "webhook_delivery_receiver"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT subscriptions.receiver INTO NEW.receiver
  FROM public.webhook_subscriptions AS subscriptions
  WHERE subscriptions.id = NEW.subscription_id AND subscriptions.enabled;
  RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION "webhook_subscription_deliveries_receiver"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE public.webhook_deliveries AS deliveries
  SET receiver = CASE WHEN NEW.enabled THEN NEW.receiver END
  WHERE deliveries.subscription_id = NEW.id
    AND deliveries.status = 'pending'
    AND deliveries.receiver IS DISTINCT FROM (CASE WHEN NEW.enabled THEN NEW.receiver END);
  RETURN NULL;
END
$$;

DROP TRIGGER "webhook_subscriptions_deliveries_receiver" ON "webhook_subscriptions";
CREATE TRIGGER "webhook_subscriptions_deliveries_receiver"
AFTER UPDATE OF "url", "enabled" ON "webhook_subscriptions"
FOR EACH ROW WHEN (OLD.receiver IS DISTINCT FROM NEW.receiver OR OLD.enabled IS DISTINCT FROM NEW.enabled)
EXECUTE FUNCTION "webhook_subscription_deliveries_receiver"();

-- A typed page of the feed reads along its own index: at most limit + 1 rows, whatever the
-- mix of types.
CREATE INDEX "webhook_events_feed_type_idx" ON "webhook_events"("type", "txid", "seq");

-- Retention deletes events in the feed's order now (along its index), so the index on created_at
-- that only it used goes: every event written costs one index entry less.
DROP INDEX "webhook_events_created_at_idx";

-- How far retention has deleted in the feed: the largest (txid, seq) it deleted. A cursor before
-- it answers 410 (what followed it is gone); one at or after it misses nothing.
CREATE TABLE "event_feed_horizon" (
    "id" SMALLINT NOT NULL DEFAULT 1,
    "txid" xid8 NOT NULL,
    "seq" BIGINT NOT NULL,

    CONSTRAINT "event_feed_horizon_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "event_feed_horizon_one_row" CHECK ("id" = 1)
);
INSERT INTO "event_feed_horizon" ("id", "txid", "seq") VALUES (1, '0', 0);
