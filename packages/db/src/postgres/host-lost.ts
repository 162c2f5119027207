/**
 * Server errors after which a connection's host cannot serve it any more: a write refused as
 * read-only (the host is a standby now), the server shutting down or starting, the connection
 * broken. A connection that saw one is closed, not reused.
 */
const HOST_LOST_CODES: ReadonlySet<string> = new Set([
  '25006', // read_only_sql_transaction
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '08000',
  '08003',
  '08006',
]);
const CONNECTION_LOST_MESSAGES: ReadonlySet<string> = new Set([
  'Connection terminated unexpectedly',
  'Connection terminated',
  'Query read timeout',
  'Client has encountered a connection error and is not queryable',
]);

export const HOST_LOST_MESSAGE = 'the connection’s host can no longer serve it';

/** Whether `error`, met on a connection, means its host can no longer serve it. */
export function isHostLost(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return (
    (typeof code === 'string' && HOST_LOST_CODES.has(code)) ||
    (typeof message === 'string' && CONNECTION_LOST_MESSAGES.has(message))
  );
}
