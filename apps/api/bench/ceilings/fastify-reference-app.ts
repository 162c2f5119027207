/**
 * The hand-tuned Fastify reference's routes (issue 33): what a team could write itself with
 * Fastify 5, Ajv and fast-json-stringify on the service's own statements, one statement a request.
 * It answers the contract's statuses and bodies on the measured paths (200 Plant or page, 400 Error
 * with the contract's messages as close as Ajv allows, 401, 404, 410), and nothing the service
 * promises beyond them: the token is one fixed string compared as it is (no lookup, scopes or
 * expiry), and there is no rate limit, access line, metric, request id, batching, If-Match,
 * If-None-Match or int64-as-string form. Its inserts and updates write what the service's write
 * (the plant, its feed event, an update's audit event), in the same tables.
 */
import {
  FIND_PLANT_SQL,
  INSERT_PLANTS_SQL,
  LIST_EVENTS_SQL,
  LIST_PLANTS_SQL,
  LIST_TAGGED_PLANTS_SQL,
  LIST_TYPED_EVENTS_SQL,
  UPDATE_PLANTS_SQL,
} from '@plant-store/db/statements';
import { INT64_MAX, INT64_MIN } from '@plant-store/schema';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import {
  exactId,
  int64Message,
  messageOf,
  type PlantOut,
  parseInt64Text,
  stringifyError,
  stringifyPlant,
  validateEventsQuery,
  validateNewPlant,
  validatePlantPatch,
  validatePlantsQuery,
} from './reference-contract.js';

/** The one thing the reference asks of its database: a statement's rows (named: prepared, where the driver can). */
export type RunStatement = <Row>(name: string, text: string, values: readonly unknown[]) => Promise<Row[]>;

interface PlantRowText {
  readonly id: string;
  readonly name: string;
  readonly tag: string | null;
  readonly version: string;
}

interface PageRow {
  readonly rows: number;
  readonly json: string;
  readonly last_id: string | null;
}

interface EventPageRow {
  readonly expired: boolean | null;
  readonly rows: number;
  readonly json: string;
  readonly last_cursor: string | null;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const REALM = 'Bearer realm="plant-store"';
const BODY_LIMIT = 65_536;
const INT64_MIN_TEXT = INT64_MIN.toString();

function send(reply: FastifyReply, status: number, json: string): FastifyReply {
  return reply.code(status).header('content-type', JSON_TYPE).send(json);
}

function fail(reply: FastifyReply, status: number, message: string, code = status): FastifyReply {
  return send(reply, status, stringifyError({ error: code, message }));
}

function plantOut(id: number | bigint, name: string, tag: string | null | undefined): PlantOut {
  return tag === null || tag === undefined ? { id, name } : { id, name, tag };
}

function sendPlant(reply: FastifyReply, row: PlantRowText): FastifyReply {
  reply.header('etag', `"${row.version}"`);
  return send(reply, 200, stringifyPlant(plantOut(BigInt(row.id), row.name, row.tag)));
}

/** A body as JSON.parse reads it, or the 400's message. */
function readJson(text: string): { readonly value: unknown } | { readonly message: string } {
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    return { message: `request body is not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}

function nextLink(query: Readonly<Record<string, string>>): string {
  return `<?${new URLSearchParams(query)}>; rel="next"`;
}

export function createFastifyReference(run: RunStatement, token: string): FastifyInstance {
  const expected = `Bearer ${token}`;
  const app = Fastify({ logger: false, bodyLimit: BODY_LIMIT });

  // The body stays text: read by JSON.parse in the handler, and again losslessly for an id past 2^53.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    ['application/json', 'application/merge-patch+json'],
    { parseAs: 'string' },
    (_request, body, done) => done(null, body),
  );

  // A fixed string compare, before the body is read.
  app.addHook('onRequest', (request, reply, done) => {
    const header = request.headers.authorization;
    if (header === expected) return done();
    if (header === undefined || header === '') {
      reply.header('www-authenticate', REALM);
      fail(reply, 401, 'authentication required: send Authorization: Bearer <token>');
    } else {
      reply.header('www-authenticate', `${REALM}, error="invalid_token"`);
      fail(reply, 401, 'the bearer token is invalid or has been revoked');
    }
  });

  app.setNotFoundHandler((request, reply) => fail(reply, 404, `no route for ${request.method} ${request.url}`));
  // Fastify's own refusals (a body too large, another content type): a request fault is the client's.
  app.setErrorHandler((error: { statusCode?: number; message: string }, _request, reply) => {
    const status = error.statusCode ?? 500;
    return status >= 500 ? fail(reply, 500, 'internal error') : fail(reply, 400, error.message, status);
  });

  app.post('/plants', async (request, reply) => {
    const text = request.body as string;
    const read = readJson(text);
    if ('message' in read) return fail(reply, 400, read.message);
    const body = read.value as { id: number; name: string; tag?: string };
    if (!validateNewPlant(body)) return fail(reply, 400, messageOf(validateNewPlant.errors, 'request body'));
    const id = exactId(body.id, text);
    if (id === null) return fail(reply, 400, int64Message('id'));
    const plant = stringifyPlant(plantOut(id, body.name, body.tag));
    const ids = [id.toString()];
    const inserted = await run<{ version: string }>('reference_insert_plants', INSERT_PLANTS_SQL, [
      ids,
      [body.name],
      [body.tag ?? null],
      [plant],
      [null],
      [null],
    ]);
    const [row] = inserted;
    if (row !== undefined) {
      reply.header('etag', `"${row.version}"`);
      return send(reply, 200, plant);
    }
    // Stored already (never in the bench: its ids are new): a replay answers the stored plant.
    const [stored] = await run<PlantRowText>('reference_find_plant', FIND_PLANT_SQL, ids);
    if (stored === undefined || stored.name !== body.name || stored.tag !== (body.tag ?? null)) {
      return fail(reply, 400, `a plant with id ${id} already exists with a different name or tag`, 409);
    }
    return sendPlant(reply, stored);
  });

  app.get<{ Params: { id: string } }>('/plants/:id', async (request, reply) => {
    const id = parseInt64Text(request.params.id);
    if (id === null) return fail(reply, 400, int64Message('id'));
    const [row] = await run<PlantRowText>('reference_find_plant', FIND_PLANT_SQL, [id.toString()]);
    return row === undefined ? fail(reply, 404, `no plant with id ${id}`) : sendPlant(reply, row);
  });

  app.get('/plants', async (request, reply) => {
    const query = request.query as { limit?: number; tag?: string; after?: unknown };
    const after = query.after;
    if (!validatePlantsQuery(query)) return fail(reply, 400, messageOf(validatePlantsQuery.errors, 'query'));
    const limit = query.limit ?? 20;
    let from = INT64_MIN_TEXT;
    if (after !== undefined) {
      const last = typeof after === 'string' ? parseInt64Text(after) : null;
      if (last === null) return fail(reply, 400, int64Message('after'));
      if (last === INT64_MAX) return send(reply, 200, '[]');
      from = (last + 1n).toString();
    }
    const [page] =
      query.tag === undefined
        ? await run<PageRow>('reference_list_plants', LIST_PLANTS_SQL, [from, limit + 1])
        : await run<PageRow>('reference_list_tagged', LIST_TAGGED_PLANTS_SQL, [query.tag, from, limit + 1]);
    if (page === undefined) throw new Error('a page statement returned no row');
    if (page.rows > limit && page.last_id !== null) {
      const next = query.tag === undefined ? { limit: String(limit) } : { limit: String(limit), tag: query.tag };
      reply.header('link', nextLink({ ...next, after: page.last_id }));
    }
    return send(reply, 200, page.json);
  });

  app.patch<{ Params: { id: string } }>('/plants/:id', async (request, reply) => {
    const id = parseInt64Text(request.params.id);
    if (id === null) return fail(reply, 400, int64Message('id'));
    const text = request.body as string;
    const read = readJson(text);
    if ('message' in read) return fail(reply, 400, read.message);
    const body = read.value as { id?: number; name?: string; tag?: string | null };
    if (!validatePlantPatch(body)) return fail(reply, 400, messageOf(validatePlantPatch.errors, 'request body'));
    if (body.id !== undefined) {
      const sent = exactId(body.id, text);
      if (sent === null) return fail(reply, 400, int64Message('id'));
      if (BigInt(sent) !== id) {
        return fail(reply, 400, `id cannot change: the body's id ${sent} is not the path's ${id}`);
      }
    }
    const ids = [id.toString()];
    const [row] = await run<PlantRowText>('reference_update_plants', UPDATE_PLANTS_SQL, [
      ids,
      [body.name !== undefined],
      [body.name ?? null],
      [body.tag === undefined ? 'keep' : body.tag === null ? 'remove' : 'set'],
      [body.tag ?? null],
      [null],
      [null],
      ['token'],
      ['bench'],
      ['default'],
      [request.ip],
    ]);
    if (row !== undefined) return sendPlant(reply, row);
    // Nothing written: no such plant, or a patch that changes nothing (answered as it is).
    const [stored] = await run<PlantRowText>('reference_find_plant', FIND_PLANT_SQL, ids);
    return stored === undefined ? fail(reply, 404, `no plant with id ${id}`) : sendPlant(reply, stored);
  });

  app.get('/events', async (request, reply) => {
    const query = request.query as { limit?: number; after?: string; type?: string };
    if (!validateEventsQuery(query)) {
      const [first] = validateEventsQuery.errors ?? [];
      return fail(
        reply,
        400,
        first?.instancePath === '/after'
          ? 'after must be a cursor the feed gave (digits, a dot, digits)'
          : messageOf(validateEventsQuery.errors, 'query'),
      );
    }
    const limit = query.limit ?? 100;
    const [txid = '0', seq = '0'] = query.after === undefined ? [] : query.after.split('.');
    const values = [txid, seq, limit + 1];
    const [page] =
      query.type === undefined
        ? await run<EventPageRow>('reference_list_events', LIST_EVENTS_SQL, values)
        : await run<EventPageRow>('reference_list_typed_events', LIST_TYPED_EVENTS_SQL, [...values, query.type]);
    if (page === undefined) throw new Error('a feed page statement returned no row');
    if (page.expired === true && query.after !== undefined) {
      return fail(reply, 410, `the events after cursor ${query.after} are no longer kept`);
    }
    if (page.rows > limit && page.last_cursor !== null) {
      const next = query.type === undefined ? { limit: String(limit) } : { limit: String(limit), type: query.type };
      reply.header('link', nextLink({ ...next, after: page.last_cursor }));
    }
    return send(reply, 200, page.json);
  });

  return app;
}
