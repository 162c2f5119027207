-- Teams, one audit log, and token names unique ignoring case. Every token and subscription that
-- exists moves to the team "default" (the column default), nothing lost; plants created before
-- this have no known creating team (null).

-- AlterTable
ALTER TABLE "api_tokens" ADD COLUMN     "name_key" VARCHAR(100),
ADD COLUMN     "team" VARCHAR(100) NOT NULL DEFAULT 'default';

-- Token names are unique ignoring case from now on: name_key is the name in lower case, unique.
-- Existing names that differ only in case keep working: the oldest of each such group takes the
-- key, the others keep none (their exact names stay unique by api_tokens_name_key), and no new
-- name can take any of their spellings. Names are ASCII letters, digits, ".", "_" and "-", so
-- lower() is the same in every locale.
UPDATE "api_tokens" AS token SET "name_key" = lower(token."name")
WHERE NOT EXISTS (
  SELECT FROM "api_tokens" AS older
  WHERE lower(older."name") = lower(token."name")
    AND (older."created_at", older."id") < (token."created_at", token."id")
);

-- Every new token gets its key from its name, whoever inserts it (a replica of the previous
-- version during a rolling deploy too: its case-only duplicate then fails as a taken name).
CREATE FUNCTION "api_token_name_key"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.name_key := lower(NEW.name);
  RETURN NEW;
END
$$;

CREATE TRIGGER "api_tokens_name_key"
BEFORE INSERT ON "api_tokens"
FOR EACH ROW EXECUTE FUNCTION "api_token_name_key"();

-- AlterTable
ALTER TABLE "plants" ADD COLUMN     "created_by_team" VARCHAR(100);

-- AlterTable
ALTER TABLE "webhook_subscriptions" ADD COLUMN     "team" VARCHAR(100) NOT NULL DEFAULT 'default';

-- CreateTable
CREATE TABLE "audit_events" (
    "id" BIGSERIAL NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "team" VARCHAR(100) NOT NULL,
    "actor_kind" VARCHAR(16) NOT NULL,
    "actor_name" VARCHAR(100) NOT NULL,
    "actor_team" VARCHAR(100),
    "action" VARCHAR(64) NOT NULL,
    "target" TEXT NOT NULL,
    "client_address" TEXT,
    "details" TEXT,

    CONSTRAINT "audit_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "audit_events_team_id_idx" ON "audit_events"("team", "id");

-- CreateIndex
CREATE INDEX "audit_events_occurred_at_idx" ON "audit_events"("occurred_at");

-- CreateIndex
CREATE UNIQUE INDEX "api_tokens_name_key_key" ON "api_tokens"("name_key");

-- CreateIndex
CREATE INDEX "api_tokens_team_created_at_idx" ON "api_tokens"("team", "created_at");

-- CreateIndex
CREATE INDEX "webhook_subscriptions_team_created_at_idx" ON "webhook_subscriptions"("team", "created_at");
