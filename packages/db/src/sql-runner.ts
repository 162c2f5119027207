/**
 * The driver under Prisma (a pg Pool, or the PGlite instance): both answer `query(text, values)`
 * with `{ rows }`. The hot statements (plant writes and reads, the webhook dispatcher's claim and
 * record, token lookups) go straight to it: each is one fixed SQL text, prepared once per
 * connection on PostgreSQL (see prepared-statements.ts). Ids go both ways as decimal text, cast in
 * the database: exact, never a double, the same on both drivers.
 */
export interface SqlRunner {
  query<TRow>(text: string, values: unknown[]): Promise<{ rows: TRow[] }>;
}
