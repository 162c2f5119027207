import { DatabaseUnavailableError } from './errors.js';
import { Prisma } from './generated/prisma/client.js';

/** Prisma's codes for "cannot reach / lost / timed out waiting for the database". */
const UNAVAILABLE_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);
/** Driver-level codes that mean the connection, not the query, failed. */
const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '08000',
  '08003',
  '08006',
  '08001',
  '08004',
  // A write reached a host that is a standby now (a failover under way): another host will take it.
  '25006', // read_only_sql_transaction
  // Transient server-side refusals, not the client's fault: worth a retry, so 503 rather than 500.
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available (lock_timeout)
  '57014', // query_canceled (statement_timeout)
  '53100', // disk_full
  '53200', // out_of_memory
]);

/**
 * Whether `error` is a unique constraint's refusal: Prisma's P2002 from a model query, or from a
 * raw one (P2010) the driver adapter's error of kind UniqueConstraintViolation.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return false;
  if (error.code === 'P2002') return true;
  const adapterError = (error.meta as { driverAdapterError?: { cause?: { kind?: unknown } } } | undefined)
    ?.driverAdapterError;
  return error.code === 'P2010' && adapterError?.cause?.kind === 'UniqueConstraintViolation';
}

/**
 * What node-postgres and pg-pool throw, without a code, when a connection fails or times out;
 * the driver adapter passes these through untranslated.
 */
const CONNECTION_ERROR_MESSAGES = new Set([
  'Connection terminated unexpectedly', // the server went away mid-query (crash, immediate stop)
  'Connection terminated', // the connection ended with the query still pending
  'Connection terminated due to connection timeout', // connectionTimeoutMillis while connecting
  'timeout exceeded when trying to connect', // connectionTimeoutMillis waiting for a pooled connection
  'Query read timeout', // query_timeout: the server stopped answering
  'Client has encountered a connection error and is not queryable',
]);

/**
 * Whether `error` says the database is out of reach: anywhere in its cause chain, or in the
 * driver adapter's error that Prisma keeps in `meta.driverAdapterError` (raw queries, P2010, and
 * unmapped server errors such as 57P03 "the database system is starting up", P2039).
 */
export function isUnavailable(error: unknown): boolean {
  const pending = [error];
  for (let seen = 0; pending.length > 0 && seen < 16; seen++) {
    const current = pending.pop();
    if (current instanceof Prisma.PrismaClientInitializationError) return true;
    if (current instanceof Prisma.PrismaClientKnownRequestError && UNAVAILABLE_CODES.has(current.code)) {
      return true;
    }
    if (typeof current !== 'object' || current === null) continue;
    if (current instanceof Error && CONNECTION_ERROR_MESSAGES.has(current.message)) return true;
    const { code, cause, originalCode, kind, meta } = current as {
      code?: unknown;
      cause?: unknown;
      originalCode?: unknown;
      kind?: unknown;
      meta?: { driverAdapterError?: unknown };
    };
    if (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code)) return true;
    if (typeof originalCode === 'string' && CONNECTION_ERROR_CODES.has(originalCode)) return true;
    if (kind === 'DatabaseNotReachable' || kind === 'ConnectionClosed' || kind === 'SocketTimeout') return true;
    pending.push(cause, meta?.driverAdapterError);
  }
  return false;
}

/** Rethrows database-unavailable failures as the domain error; everything else unchanged. */
export function translateError(error: unknown): unknown {
  return isUnavailable(error) ? new DatabaseUnavailableError({ cause: error }) : error;
}
