import type { Database } from '@plant-store/db';
import { teamScopeOf } from '../http/caller.js';
import { toAuditEvent } from './audit-wire.js';
import type { HandlersOf } from './mount-operations.js';

export interface AuditHandlersOptions {
  readonly db: Pick<Database, 'listAuditEvents'>;
}

/** The audit log: a team's own, or with platform:admin every team's. */
export function auditHandlers({ db }: AuditHandlersOptions): HandlersOf<'audit'> {
  return {
    listAuditEvents: async ({ query }, caller) => {
      const page = await db.listAuditEvents({ ...query, ...teamScopeOf(caller) });
      return { items: page.events.map(toAuditEvent), hasMore: page.hasMore };
    },
  };
}
