import type { AuditActor } from '../audit/audit-records.js';
import type { SqlRunner } from '../sql-runner.js';
import { PLANT_ROW_COLUMNS, type PlantRowText, toPlantRow } from './find-plant.js';
import { fanOutDue, NEXT_EVENT_SEQ, orderedEventIdSql, plantEnvelopeJson } from './plant-json.js';
import type { PlantRow } from './plant-record.js';

/** What a merge patch (RFC 7396) of a plant changes: `name` when given; `tag` set, removed (null), or kept (absent). */
export interface PlantPatch {
  readonly name?: string;
  readonly tag?: string | null;
}

/** One update: the plant, its patch, and who asks, under which precondition. */
export interface PlantUpdate {
  readonly id: bigint;
  readonly patch: PlantPatch;
  /** If-Match: the versions the plant must have now; absent: any (If-Match `*` or none). */
  readonly ifMatch?: readonly bigint[] | undefined;
  /** Who changes it: recorded in the audit log, in the same transaction. */
  readonly actor: AuditActor;
  /** The W3C traceparent of the request, kept with its event. */
  readonly traceParent?: string | undefined;
}

/**
 * The plants' updates, one statement for a batch (each id at most once in it): a row changes only
 * when it has one of the versions `expected` names (none named: any) and the patch changes its
 * content; it then takes a new version, and gets its plant.updated event (the envelope, which is
 * also the body: a `{plant.created}` subscription never gets this type) and its audit event. A
 * patch that changes nothing writes nothing, and the plant keeps its version. Returns the rows it
 * changed.
 */
export const UPDATE_PLANTS_SQL = `WITH input AS (
  SELECT * FROM unnest($1::text[]::bigint[], $2::boolean[], $3::text[], $4::text[], $5::text[], $6::text[],
    $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])
    AS input (id, set_name, name, tag_op, tag, expected, trace_parent, actor_kind, actor_name, actor_team, client_address)
), updated AS (
  UPDATE public.plants AS plants
  SET name = CASE WHEN input.set_name THEN input.name ELSE plants.name END,
    tag = CASE input.tag_op WHEN 'set' THEN input.tag WHEN 'remove' THEN NULL ELSE plants.tag END,
    version = nextval('public.plant_versions'::regclass)
  FROM input
  WHERE plants.id = input.id
    AND (input.expected IS NULL OR plants.version = ANY (string_to_array(input.expected, ',')::bigint[]))
    AND (plants.name IS DISTINCT FROM (CASE WHEN input.set_name THEN input.name ELSE plants.name END)
      OR plants.tag IS DISTINCT FROM (CASE input.tag_op WHEN 'set' THEN input.tag WHEN 'remove' THEN NULL ELSE plants.tag END))
  RETURNING plants.id, plants.name, plants.tag, plants.version, input.trace_parent, input.actor_kind,
    input.actor_name, input.actor_team, input.client_address
), events AS (
  INSERT INTO public.webhook_events (id, seq, plant_id, type, version, payload, envelope, trace_parent, fanned_out_at)
  SELECT ${orderedEventIdSql('numbered.seq')}, numbered.seq, numbered.id, 'plant.updated',
    numbered.version, body.doc, body.doc, numbered.trace_parent, ${fanOutDue('plant.updated')}
  FROM (SELECT updated.*, ${NEXT_EVENT_SEQ} AS seq FROM updated) AS numbered
  CROSS JOIN LATERAL (SELECT ${plantEnvelopeJson('plant.updated', 'numbered')} AS doc) AS body
  RETURNING fanned_out_at IS NULL AS queued
), audited AS (
  INSERT INTO public.audit_events (team, actor_kind, actor_name, actor_team, action, target, client_address)
  SELECT coalesce(updated.actor_team, 'default'), updated.actor_kind, updated.actor_name, updated.actor_team,
    'plant.updated', updated.id::text, updated.client_address
  FROM updated
)
SELECT ${PLANT_ROW_COLUMNS}, (SELECT count(*) FILTER (WHERE queued) FROM events)::int AS events FROM updated`;

export interface UpdatedPlants {
  /** The rows the statement changed, by id. */
  readonly rows: Map<bigint, PlantRow>;
  /** Events it queued for the fan-out. */
  readonly events: number;
}

/** Runs UPDATE_PLANTS_SQL for updates of distinct ids. */
export async function updatePlants(sql: SqlRunner, updates: readonly PlantUpdate[]): Promise<UpdatedPlants> {
  // In the statement's parameter order, $1 to $11.
  const columns = {
    ids: [] as string[],
    setNames: [] as boolean[],
    names: [] as (string | null)[],
    tagOps: [] as string[],
    tags: [] as (string | null)[],
    expected: [] as (string | null)[],
    traceParents: [] as (string | null)[],
    actorKinds: [] as string[],
    actorNames: [] as string[],
    actorTeams: [] as (string | null)[],
    addresses: [] as (string | null)[],
  };
  for (const { id, patch, ifMatch, actor, traceParent } of updates) {
    columns.ids.push(id.toString());
    columns.setNames.push(patch.name !== undefined);
    columns.names.push(patch.name ?? null);
    columns.tagOps.push(patch.tag === undefined ? 'keep' : patch.tag === null ? 'remove' : 'set');
    columns.tags.push(patch.tag ?? null);
    columns.expected.push(ifMatch === undefined ? null : ifMatch.join(','));
    columns.traceParents.push(traceParent ?? null);
    columns.actorKinds.push(actor.kind);
    columns.actorNames.push(actor.name);
    columns.actorTeams.push(actor.team);
    columns.addresses.push(actor.clientAddress);
  }
  const { rows } = await sql.query<PlantRowText & { events: number }>(UPDATE_PLANTS_SQL, Object.values(columns));
  return {
    rows: new Map(rows.map((row) => [BigInt(row.id), toPlantRow(row)])),
    events: rows[0]?.events ?? 0,
  };
}

/** What `patch` makes of `row`: its content after the update. */
export function patched(row: Omit<PlantRow, 'version'>, patch: PlantPatch): Omit<PlantRow, 'version'> {
  return {
    id: row.id,
    name: patch.name ?? row.name,
    tag: patch.tag === undefined ? row.tag : patch.tag,
  };
}
