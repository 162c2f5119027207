import type { AuditActor, AuthenticatedToken, TeamScope } from '@plant-store/db';

/**
 * Who sends a request, once its bearer token has been judged: the token (its name, team and
 * scopes), whether it holds `platform:admin` (every team's tokens, subscriptions and audit log),
 * and the client's address (see clientAddress). What a handler needs to keep a team to its own.
 */
export interface Caller {
  readonly token: AuthenticatedToken;
  /** The token holds `platform:admin`: the walls between teams do not apply to it. */
  readonly admin: boolean;
  readonly clientAddress: string;
}

export const PLATFORM_ADMIN_SCOPE = 'platform:admin';

/** Whose tokens and subscriptions the caller reaches: its team's, or with platform:admin every team's. */
export function teamScopeOf(caller: Caller): TeamScope {
  return caller.admin ? {} : { team: caller.token.team };
}

/** The caller as the audit log names it. */
export function actorOf(caller: Caller): AuditActor {
  return { kind: 'token', name: caller.token.name, team: caller.token.team, clientAddress: caller.clientAddress };
}
