-- CreateIndex
CREATE INDEX "webhook_deliveries_finished_idx" ON "webhook_deliveries"("created_at") WHERE (status <> 'pending');

-- CreateIndex
CREATE INDEX "webhook_deliveries_event_id_idx" ON "webhook_deliveries"("event_id");

-- CreateIndex
CREATE INDEX "webhook_events_created_at_idx" ON "webhook_events"("created_at");
