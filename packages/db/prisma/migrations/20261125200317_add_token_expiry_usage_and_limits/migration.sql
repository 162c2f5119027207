-- AlterTable
ALTER TABLE "api_tokens" ADD COLUMN     "expires_at" TIMESTAMPTZ(3),
ADD COLUMN     "last_used_at" TIMESTAMPTZ(3),
ADD COLUMN     "rate_limit_per_seconds" INTEGER,
ADD COLUMN     "rate_limit_requests" INTEGER;

-- A token's own rate limit is both numbers or neither (not in the Prisma schema, which has no check constraints).
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_rate_limit_check" CHECK (
  ("rate_limit_requests" IS NULL AND "rate_limit_per_seconds" IS NULL)
  OR ("rate_limit_requests" > 0 AND "rate_limit_per_seconds" > 0)
);
