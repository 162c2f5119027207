import { randomBytes } from 'node:crypto';
import { request } from './test-service.js';

/** A well-formed token no one issued: `pst_` and 43 random base64url characters. */
export function bogusToken(): string {
  return `pst_${randomBytes(32).toString('base64url')}`;
}

/** How many token lookups reached the database of the service at `baseUrl` so far (the metric times only those). */
export async function tokenLookups(baseUrl: string): Promise<number> {
  const text = (await request(baseUrl, '/metrics')).text;
  const line = text
    .split('\n')
    .find((candidate) =>
      candidate.startsWith('db_call_duration_seconds_count{operation="authenticateToken",outcome="ok"} '),
    );
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}
