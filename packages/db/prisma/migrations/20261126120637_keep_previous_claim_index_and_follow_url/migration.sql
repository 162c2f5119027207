-- After 20261126111900_add_webhook_receivers, a replica of an earlier version (during a rolling
-- deploy, or after a rollback) claims per subscription and had lost its index for it: each of its
-- claims would read a subscription's every delivery kept (30 days of them). The index is back
-- until a later release drops it.

-- CreateIndex
CREATE INDEX "webhook_deliveries_subscription_pending_idx" ON "webhook_deliveries"("subscription_id", "next_attempt_at") WHERE (status = 'pending');

-- A subscription whose URL is changed (the service never does; an operator in SQL might) takes
-- its pending deliveries to its new receiver, which is what claims scan by: left with the old
-- one, they would count against another receiver's cap, or, with no subscription left there,
-- never be claimed.
CREATE FUNCTION "webhook_subscription_deliveries_receiver"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE public.webhook_deliveries AS deliveries
  SET receiver = NEW.receiver
  WHERE deliveries.subscription_id = NEW.id
    AND deliveries.status = 'pending'
    AND deliveries.receiver IS DISTINCT FROM NEW.receiver;
  RETURN NULL;
END
$$;

CREATE TRIGGER "webhook_subscriptions_deliveries_receiver"
AFTER UPDATE OF "url" ON "webhook_subscriptions"
FOR EACH ROW WHEN (OLD.receiver IS DISTINCT FROM NEW.receiver)
EXECUTE FUNCTION "webhook_subscription_deliveries_receiver"();
