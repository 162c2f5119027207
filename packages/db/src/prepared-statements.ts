import type pg from 'pg';
import { INSERT_PLANTS_SQL, type SqlRunner } from './plants/insert-plants.js';
import { CLAIM_DELIVERIES_SQL } from './webhooks/claim-deliveries.js';
import { RECORD_ATTEMPT_SQL } from './webhooks/record-attempt.js';

/**
 * The statements each PostgreSQL connection prepares once and then only binds: the plant insert
 * (every create) and the dispatcher's claim and record (every delivery). Their CTEs cost the
 * server about 0.1 ms to plan each time, as much as running them with no subscription
 * (measured on a 36-row batch: planning 0.13 ms, execution 0.24 ms); prepared, the plan is
 * reused. Other statements stay unnamed.
 */
const PREPARED_STATEMENTS: ReadonlyMap<string, string> = new Map([
  [INSERT_PLANTS_SQL, 'plant_store_insert_plants'],
  [CLAIM_DELIVERIES_SQL, 'plant_store_claim_deliveries'],
  [RECORD_ATTEMPT_SQL, 'plant_store_record_attempt'],
]);

/** The pool as a SqlRunner that sends the statements above as named (prepared) statements. */
export function withPreparedStatements(pool: pg.Pool): SqlRunner {
  return {
    async query<TRow>(text: string, values: unknown[]) {
      const name = PREPARED_STATEMENTS.get(text);
      const { rows } = await pool.query(name === undefined ? { text, values } : { name, text, values });
      return { rows: rows as TRow[] };
    },
  };
}
