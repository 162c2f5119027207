import type { AuditAction } from '@plant-store/schema';

/**
 * The audit log's records as the repository takes and returns them: plain data, no Prisma types.
 * Every audited action writes its event in the same statement (and so the same transaction) as
 * the action itself: an action that did not happen leaves no event, and none happens unrecorded.
 */

/** Who acted: a bearer token over HTTP, or the command line (the platform operator). */
export interface AuditActor {
  readonly kind: 'token' | 'cli';
  /** The token's name, or the command line's OS user. */
  readonly name: string;
  /** The token's team; null for the command line. */
  readonly team: string | null;
  /** The client's address over HTTP (see the service's clientAddress); null for the command line. */
  readonly clientAddress: string | null;
}

/** One event of the audit log. */
export interface AuditEventRecord {
  /** Ascending in the order the events were written (int64). */
  readonly id: bigint;
  readonly occurredAt: Date;
  /** The team whose log shows it (the owner of what was acted on; for a plant, the actor's team). */
  readonly team: string;
  readonly actor: Omit<AuditActor, 'clientAddress'>;
  /** What was done: one of the contract's AUDIT_ACTIONS. */
  readonly action: AuditAction;
  /** What it was done to: a token name, a webhook id, a delivery id, a plant id. */
  readonly target: string;
  readonly clientAddress: string | null;
  /** What else is worth knowing about it (the scopes granted, the URL subscribed). */
  readonly details: Readonly<Record<string, unknown>> | null;
}

export interface AuditEventPage {
  readonly events: AuditEventRecord[];
  /** Whether more events follow the last one. */
  readonly hasMore: boolean;
}

/** The command line, as the audit log names it: its OS user, no team, no address. */
export function commandLineActor(osUser: string): AuditActor {
  return { kind: 'cli', name: osUser.slice(0, 100) || 'unknown', team: null, clientAddress: null };
}
