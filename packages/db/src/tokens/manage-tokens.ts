import type { AuditActor } from '../audit/audit-records.js';
import { AUDIT_COLUMNS, auditValues } from '../audit/audit-sql.js';
import { TokenNotFoundError } from '../errors.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { translateError } from '../prisma-errors.js';
import { TOKEN_RECORD_COLUMNS, type TokenRecord, type TokenRow, toTokenRecord } from './token-record.js';

export interface ListTokensOptions {
  /** Also the revoked ones (the token command lists them; the HTTP listing does not). Default false. */
  readonly includeRevoked?: boolean;
  /** Only this team's; absent: every team's (platform:admin, the command line). */
  readonly team?: string | undefined;
}

/** Tokens, oldest first: the active ones (expired ones included), or every one; one team's or all. */
export async function listTokens(prisma: PrismaClient, options: ListTokensOptions = {}): Promise<TokenRecord[]> {
  try {
    const rows = await prisma.$queryRaw<TokenRow[]>`SELECT ${TOKEN_RECORD_COLUMNS} FROM public.api_tokens
WHERE (${options.team ?? null}::varchar IS NULL OR team = ${options.team ?? null}::varchar)
  AND (${options.includeRevoked === true} OR revoked_at IS NULL)
ORDER BY created_at, name`;
    return rows.map(toTokenRecord);
  } catch (error) {
    throw translateError(error);
  }
}

export interface RevokeTokenOptions {
  /** Only a token of this team (another team's answers as if it did not exist); absent: any team's. */
  readonly team?: string | undefined;
  /** Who revokes it: recorded in the audit log, in the same transaction. */
  readonly actor: AuditActor;
}

/**
 * Revokes the active token named `name` (of `team`, when given), recording it in the audit log by
 * the same statement; TokenNotFoundError when there is none. It stops authenticating at once in
 * this process and, elsewhere, within the token directory's refresh interval.
 */
export async function revokeToken(
  prisma: PrismaClient,
  name: string,
  options: RevokeTokenOptions,
): Promise<TokenRecord> {
  const team = options.team ?? null;
  let rows: TokenRow[];
  try {
    rows = await prisma.$queryRaw<TokenRow[]>`WITH revoked AS (
  UPDATE public.api_tokens SET revoked_at = now()
  WHERE name = ${name}::varchar AND revoked_at IS NULL AND (${team}::varchar IS NULL OR team = ${team}::varchar)
  RETURNING ${TOKEN_RECORD_COLUMNS}
), audited AS (
  INSERT INTO public.audit_events (${AUDIT_COLUMNS})
  SELECT revoked.team, ${auditValues(options.actor, 'token.revoked', Prisma.sql`revoked.name`, null)} FROM revoked
)
SELECT * FROM revoked`;
  } catch (error) {
    throw translateError(error);
  }
  const [row] = rows;
  if (row === undefined) throw new TokenNotFoundError(name);
  return toTokenRecord(row);
}

export async function countTokens(prisma: PrismaClient): Promise<number> {
  try {
    return await prisma.apiToken.count();
  } catch (error) {
    throw translateError(error);
  }
}
