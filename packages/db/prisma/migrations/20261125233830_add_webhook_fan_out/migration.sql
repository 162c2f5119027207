-- DropIndex
DROP INDEX "webhook_deliveries_event_id_idx";

-- AlterTable
ALTER TABLE "webhook_events" ADD COLUMN     "fanned_out_at" TIMESTAMPTZ(3);

-- Events written before this migration got their deliveries in the create's own statement: they
-- are fanned out already. (Replicas still running the previous version during a rolling deploy
-- keep writing deliveries with their events; a dispatcher fanning those out again adds nothing,
-- by the unique (event_id, subscription_id) below.)
UPDATE "webhook_events" SET "fanned_out_at" = "created_at";

-- CreateIndex
CREATE UNIQUE INDEX "webhook_deliveries_event_id_subscription_id_key" ON "webhook_deliveries"("event_id", "subscription_id");

-- CreateIndex
CREATE INDEX "webhook_events_fan_out_idx" ON "webhook_events"("created_at", "id") WHERE (fanned_out_at IS NULL);
