import type pg from 'pg';

/**
 * A commit PostgreSQL acknowledged without its synchronous standby's confirmation: a cancel
 * (pg_cancel_backend, a pooler's timeout) ended its wait for the standby, and PostgreSQL then
 * commits locally and says so only in a WARNING. The write would be lost if the primary failed
 * before the standby had it, so it is not acknowledged: the statement fails with SQLSTATE 57014
 * (query_canceled, what happened), a 503; a retry of the same create is answered as a replay once
 * the row is there. (The statement timeout never ends that wait: PostgreSQL disarms it before the
 * commit; the query timeout does, failing the statement in the client.)
 */
export class UnconfirmedCommitError extends Error {
  override readonly name = 'UnconfirmedCommitError';
  readonly code = '57014';
  readonly severity = 'ERROR';
  constructor(readonly host: string | undefined) {
    super('the commit was not confirmed by the synchronous standby before the statement timeout');
  }
}

/**
 * The WARNING PostgreSQL sends when a commit's wait for its synchronous standby is cancelled: its
 * SQLSTATE is the generic 01000, so the text tells it (servers with lc_messages other than English
 * word it otherwise).
 */
const UNCONFIRMED_COMMIT_WARNING = /^canceling (the )?wait for synchronous replication/;

/**
 * Fails the statement in flight on `client` when PostgreSQL warns that its commit was not
 * confirmed: node-postgres would report it as a success. The failure is delivered at the
 * statement's end (ReadyForQuery), as node-postgres does with its own mid-statement errors.
 */
export function failUnconfirmedCommits(client: pg.PoolClient, host: string | undefined): void {
  client.on('notice', (notice) => {
    if (!UNCONFIRMED_COMMIT_WARNING.test(notice.message ?? '')) return;
    const query = (
      client as unknown as { _getActiveQuery?: () => { _canceledDueToError?: unknown } | null }
    )._getActiveQuery?.();
    if (query) query._canceledDueToError = new UnconfirmedCommitError(host);
  });
}
