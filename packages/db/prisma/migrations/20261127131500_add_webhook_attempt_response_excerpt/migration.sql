-- The start of the receiver's answer body, kept with each attempt (at most 256 bytes of it, as
-- text): what a team reads first when deliveries fail. Null for attempts made before, and when
-- no answer came or its body was empty.
-- AlterTable
ALTER TABLE "webhook_attempts" ADD COLUMN     "response_excerpt" TEXT;
