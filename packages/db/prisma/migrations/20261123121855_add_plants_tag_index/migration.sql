-- CreateIndex
CREATE INDEX "plants_tag_id_idx" ON "plants"("tag", "id");
