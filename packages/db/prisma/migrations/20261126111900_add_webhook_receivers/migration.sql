-- Receivers stored, not computed per claim: a subscription's receiver (the scheme, host and port
-- of its URL, see receiverOrigin) is a column the database keeps, and each delivery carries a
-- copy, so that a claim scans each receiver's due deliveries along one index, not each
-- subscription's (at 100 subscriptions of one receiver: one index scan a claim instead of 100).

-- receiverOrigin in SQL: lowercase, everything before the path, without the scheme's default
-- port. The only place this is computed in the database; a test holds it to receiverOrigin.
CREATE FUNCTION "webhook_receiver_origin"(url text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN regexp_replace(lower(coalesce(substring(url from '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*'), url)), '^(http://[^/]*):80$|^(https://[^/]*):443$', '\1\2');

-- DropIndex
DROP INDEX "webhook_deliveries_pending_idx";

-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "receiver" TEXT;

-- AlterTable
ALTER TABLE "webhook_subscriptions" ADD COLUMN     "receiver" TEXT;

UPDATE "webhook_subscriptions" SET "receiver" = "webhook_receiver_origin"("url");

-- Only pending deliveries are claimed: finished ones need no receiver (a resend of one gets it
-- from the trigger below).
UPDATE "webhook_deliveries" AS deliveries
SET "receiver" = subscriptions.receiver
FROM "webhook_subscriptions" AS subscriptions
WHERE subscriptions.id = deliveries.subscription_id AND deliveries.status = 'pending';

-- CreateIndex
CREATE INDEX "webhook_deliveries_pending_idx" ON "webhook_deliveries"("receiver", "next_attempt_at") WHERE (status = 'pending');

-- A subscription's receiver follows its URL, whoever writes it (the service never does).
CREATE FUNCTION "webhook_subscription_receiver"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.receiver := public.webhook_receiver_origin(NEW.url);
  RETURN NEW;
END
$$;

CREATE TRIGGER "webhook_subscriptions_receiver"
BEFORE INSERT OR UPDATE OF "url", "receiver" ON "webhook_subscriptions"
FOR EACH ROW EXECUTE FUNCTION "webhook_subscription_receiver"();

-- A pending delivery written without its receiver gets its subscription's: one written by a
-- previous version's fan-out (replicas still running it during a rolling deploy), or one finished
-- before this migration and resent since. No claim would ever find it otherwise. The fan-out
-- writes the receiver itself, so this fires for none of its rows.
CREATE FUNCTION "webhook_delivery_receiver"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT subscriptions.receiver INTO NEW.receiver
  FROM public.webhook_subscriptions AS subscriptions
  WHERE subscriptions.id = NEW.subscription_id;
  RETURN NEW;
END
$$;

CREATE TRIGGER "webhook_deliveries_receiver"
BEFORE INSERT OR UPDATE ON "webhook_deliveries"
FOR EACH ROW WHEN (NEW.receiver IS NULL AND NEW.status = 'pending')
EXECUTE FUNCTION "webhook_delivery_receiver"();
