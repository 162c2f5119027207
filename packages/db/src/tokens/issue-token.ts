import type { AuditActor } from '../audit/audit-records.js';
import { AUDIT_COLUMNS, auditValues } from '../audit/audit-sql.js';
import { TokenLimitError, TokenNameTakenError } from '../errors.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { isUniqueViolation, translateError } from '../prisma-errors.js';
import {
  TOKEN_RECORD_COLUMNS,
  type TokenRateLimit,
  type TokenRecord,
  type TokenRow,
  toTokenRecord,
} from './token-record.js';
import { generateToken, hashToken } from './token-secret.js';

export interface IssueTokenOptions {
  readonly name: string;
  readonly scopes: readonly string[];
  /** The team it belongs to. */
  readonly team: string;
  /** When it stops authenticating; absent: never. */
  readonly expiresAt?: Date;
  /** Its own rate limit; absent: the service's default. */
  readonly rateLimit?: TokenRateLimit;
  /**
   * Most active (not revoked) tokens its team may hold, this one included; absent: no cap (the
   * command line, the platform operator).
   */
  readonly teamLimit?: number;
  /** Who issues it: recorded in the audit log, in the same transaction. */
  readonly actor: AuditActor;
}

export interface IssuedToken {
  /** The bearer token itself: shown once, stored nowhere. */
  readonly token: string;
  readonly record: TokenRecord;
}

/**
 * The transaction-scoped advisory lock class that serialises the issuing of one team's tokens
 * across replicas (the second key is the team's hash), so that concurrent issues cannot pass the
 * team's cap together ("pstok" in ASCII; any constant no other code of this database locks will do).
 */
const ISSUE_TOKEN_LOCK_CLASS = 0x70_73_74_6f;

/**
 * A new token, recorded in the audit log by the same statement. TokenNameTakenError when any
 * token, revoked ones included, has the name ignoring case (the name_key index; see the
 * migration); TokenLimitError when its team holds `teamLimit` active tokens already.
 */
export async function issueToken(prisma: PrismaClient, options: IssueTokenOptions): Promise<IssuedToken> {
  const token = generateToken();
  const { name, team, actor, rateLimit } = options;
  const limit = options.teamLimit ?? null;
  const scopes = JSON.stringify([...new Set(options.scopes)]);
  const details = { scopes: [...new Set(options.scopes)], expiresAt: options.expiresAt?.toISOString() ?? null };
  let rows: TokenRow[];
  try {
    [, rows] = await prisma.$transaction([
      prisma.$executeRaw`SELECT pg_advisory_xact_lock(${ISSUE_TOKEN_LOCK_CLASS}::int, hashtext(${team}::text))`,
      prisma.$queryRaw<TokenRow[]>`WITH issued AS (
  INSERT INTO public.api_tokens (id, name, token_hash, scopes, team, expires_at, rate_limit_requests, rate_limit_per_seconds)
  SELECT gen_random_uuid(), ${name}::varchar, decode(${Buffer.from(hashToken(token)).toString('hex')}, 'hex'),
    ARRAY(SELECT jsonb_array_elements_text(${scopes}::jsonb)), ${team}::varchar,
    ${options.expiresAt?.toISOString() ?? null}::timestamptz, ${rateLimit?.requests ?? null}::int,
    ${rateLimit?.perSeconds ?? null}::int
  WHERE ${limit}::int IS NULL
    OR (SELECT count(*) FROM public.api_tokens WHERE team = ${team}::varchar AND revoked_at IS NULL) < ${limit}::int
  RETURNING ${TOKEN_RECORD_COLUMNS}
), audited AS (
  INSERT INTO public.audit_events (${AUDIT_COLUMNS})
  SELECT issued.team, ${auditValues(actor, 'token.issued', Prisma.sql`issued.name`, details)} FROM issued
)
SELECT * FROM issued`,
    ]);
  } catch (error) {
    if (isUniqueViolation(error)) throw new TokenNameTakenError(name);
    throw translateError(error);
  }
  const [row] = rows;
  if (row === undefined) throw new TokenLimitError(team, limit ?? 0);
  return { token, record: toTokenRecord(row) };
}
