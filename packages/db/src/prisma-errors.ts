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
]);

export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}

/** Whether `error`, or anything in its cause chain, says the database is out of reach. */
export function isUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 8; depth++) {
    if (current instanceof Prisma.PrismaClientInitializationError) return true;
    if (current instanceof Prisma.PrismaClientKnownRequestError && UNAVAILABLE_CODES.has(current.code)) {
      return true;
    }
    if (typeof current !== 'object') return false;
    const { code, cause, originalCode } = current as { code?: unknown; cause?: unknown; originalCode?: unknown };
    if (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code)) return true;
    if (typeof originalCode === 'string' && CONNECTION_ERROR_CODES.has(originalCode)) return true;
    const kind = (current as { kind?: unknown }).kind;
    if (kind === 'DatabaseNotReachable' || kind === 'ConnectionClosed' || kind === 'SocketTimeout') return true;
    current = cause;
  }
  return false;
}

/** Rethrows database-unavailable failures as the domain error; everything else unchanged. */
export function translateError(error: unknown): unknown {
  return isUnavailable(error) ? new DatabaseUnavailableError({ cause: error }) : error;
}
