import type pg from 'pg';
import { LIST_ALL_AUDIT_EVENTS_SQL, LIST_TEAM_AUDIT_EVENTS_SQL } from './audit/list-audit-events.js';
import { CURRENT_CURSOR_SQL, LIST_EVENTS_SQL, LIST_TYPED_EVENTS_SQL } from './events/list-events.js';
import { DELETE_PLANT_SQL } from './plants/delete-plant.js';
import { FIND_PLANT_SQL, FIND_PLANTS_SQL } from './plants/find-plant.js';
import { INSERT_PLANTS_SQL } from './plants/insert-plants.js';
import {
  LIST_PLANTS_BATCH_SQL,
  LIST_PLANTS_SQL,
  LIST_TAGGED_PLANTS_BATCH_SQL,
  LIST_TAGGED_PLANTS_SQL,
} from './plants/list-plants.js';
import { UPDATE_PLANTS_SQL } from './plants/update-plants.js';
import type { SqlRunner } from './sql-runner.js';
import { AUTHENTICATE_TOKEN_SQL } from './tokens/authenticate-token.js';
import { CLAIM_DELIVERIES_SQL } from './webhooks/claim-deliveries.js';
import { FAN_OUT_EVENTS_SQL } from './webhooks/fan-out-events.js';
import { RECORD_ATTEMPTS_SQL } from './webhooks/record-attempt.js';

/**
 * The statements each PostgreSQL connection prepares once and then only binds: every statement the
 * hot paths send straight to the driver. The plant insert's and the dispatcher's CTEs cost the
 * server about 0.1 ms to plan each time, as much as running them with no subscription (measured
 * on a 36-row batch: planning 0.13 ms, execution 0.24 ms); a read by primary key costs more to
 * parse and plan than to run. Prepared, the parse is done once and the plan reused. Other
 * statements (Prisma's) stay unnamed.
 */
const PREPARED_STATEMENTS: ReadonlyMap<string, string> = new Map([
  [INSERT_PLANTS_SQL, 'plant_store_insert_plants'],
  [FIND_PLANT_SQL, 'plant_store_find_plant'],
  [FIND_PLANTS_SQL, 'plant_store_find_plants'],
  [LIST_PLANTS_SQL, 'plant_store_list_plants'],
  [LIST_TAGGED_PLANTS_SQL, 'plant_store_list_tagged_plants'],
  [LIST_PLANTS_BATCH_SQL, 'plant_store_list_plants_batch'],
  [LIST_TAGGED_PLANTS_BATCH_SQL, 'plant_store_list_tagged_plants_batch'],
  [DELETE_PLANT_SQL, 'plant_store_delete_plant'],
  [UPDATE_PLANTS_SQL, 'plant_store_update_plants'],
  [LIST_EVENTS_SQL, 'plant_store_list_events'],
  [LIST_TYPED_EVENTS_SQL, 'plant_store_list_typed_events'],
  [CURRENT_CURSOR_SQL, 'plant_store_current_cursor'],
  [AUTHENTICATE_TOKEN_SQL, 'plant_store_authenticate_token'],
  [LIST_TEAM_AUDIT_EVENTS_SQL, 'plant_store_list_team_audit_events'],
  [LIST_ALL_AUDIT_EVENTS_SQL, 'plant_store_list_all_audit_events'],
  [CLAIM_DELIVERIES_SQL, 'plant_store_claim_deliveries'],
  [FAN_OUT_EVENTS_SQL, 'plant_store_fan_out_events'],
  [RECORD_ATTEMPTS_SQL, 'plant_store_record_attempts'],
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
