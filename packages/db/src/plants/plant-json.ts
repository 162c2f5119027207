/**
 * JSON written by PostgreSQL, as the contract writes it (what `stringifyJson` writes, byte for
 * byte): `to_json` escapes a string as JSON.stringify does (the same short escapes, `\u00xx` for
 * other control characters), and an int8's text is its exact decimal. SQL fragments over a row
 * alias, for the statements that answer or record plants.
 */

/** A plant's wire object `{"id","name","tag"?}` from the row `alias`. */
export function plantJson(alias: string): string {
  return `'{"id":' || ${alias}.id::text || ',"name":' || to_json(${alias}.name)::text
  || coalesce(',"tag":' || to_json(${alias}.tag)::text, '') || '}'`;
}

/**
 * A plant's wire object without its closing brace, `{"id","name","tag"?`, from the row `alias`: for
 * a statement that writes the plant and the plant with its version from one string.
 */
export function plantJsonOpen(alias: string): string {
  return `'{"id":' || ${alias}.id::text || ',"name":' || to_json(${alias}.name)::text
  || coalesce(',"tag":' || to_json(${alias}.tag)::text, '')`;
}

/** A plant with its version, `{"id","name","tag"?,"version"}`: an event's `data`. */
function versionedPlantJson(alias: string): string {
  return `'{"id":' || ${alias}.id::text || ',"name":' || to_json(${alias}.name)::text
  || coalesce(',"tag":' || to_json(${alias}.tag)::text, '') || ',"version":' || ${alias}.version::text || '}'`;
}

/** The statement's clock as RFC 3339 in UTC with milliseconds, as `Date#toISOString` writes it. */
export const NOW_RFC3339 = `to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The Standard Webhooks envelope of a plant event, `{"type","timestamp","data"}`, `data` the
 * plant of row `alias` with its version, the timestamp the statement's clock (the same on every
 * attempt, so every retry sends the same bytes).
 */
export function plantEnvelopeJson(type: 'plant.created' | 'plant.updated' | 'plant.deleted', alias: string): string {
  return `'{"type":"${type}","timestamp":"' || ${NOW_RFC3339} || '","data":' || ${versionedPlantJson(alias)} || '}'`;
}

/**
 * Whether an event of `type` is to be fanned out now: some enabled subscription takes it. An
 * uncorrelated sub-query, so PostgreSQL asks once per statement; none (the usual case without
 * subscribers) and the event is written fanned out already, keeping the fan-out's queue empty.
 */
export function fanOutDue(type: string): string {
  return `CASE WHEN EXISTS (SELECT FROM public.webhook_subscriptions AS subscribers
    WHERE subscribers.enabled AND '${type}' = ANY (subscribers.event_types)) THEN NULL ELSE now() END`;
}

/**
 * The first 23 characters of a written event's id, the same for the whole statement: `msg_` and
 * a UUIDv7's first three groups, `tttttttt-tttt-7000`: the statement's clock in milliseconds
 * since the epoch (48 bits), version 7, and 12 bits of zeros.
 */
export function orderedEventIdPrefixSql(): string {
  return `'msg_' || (SELECT substr(hex, 1, 8) || '-' || substr(hex, 9, 4) || '-7000'
    FROM (SELECT lpad(to_hex((extract(epoch FROM now()) * 1000)::bigint), 12, '0') AS hex) AS clock_hex)`;
}

/**
 * The events' next `seq` (the column's own default), taken in the statement that writes an event
 * so that its id (orderedEventIdSql) can be made of it.
 */
export const NEXT_EVENT_SEQ = "nextval('public.webhook_events_seq_seq'::regclass)";

/**
 * An event's id: the prefix (orderedEventIdPrefixSql, by default read in place: one value for the
 * statement), then the UUID's variant (binary 10) and the event's `seq` in the 60 bits after it,
 * as the last two groups, `-8sss-ssssssssssss`: unique as `seq` is, ascending with it, a valid
 * UUIDv7 (RFC 9562: the bits after the clock need not be random) and so a valid Standard Webhooks
 * message id. Ascending ids go to the right-hand edge of the events' primary key rather than to a
 * random page each (a random `gen_random_uuid()` id dirtied a page of that index a row, and wrote
 * it whole to the WAL after every checkpoint).
 */
export function orderedEventIdSql(seq: string, prefix = orderedEventIdPrefixSql()): string {
  return `${prefix} || '-8' || overlay(lpad(to_hex(${seq}), 15, '0') PLACING '-' FROM 4 FOR 0)`;
}
