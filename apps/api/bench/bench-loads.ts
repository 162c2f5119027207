/** The requests of each scenario the bench sends over HTTP, to the service or a reference. */
import { benchPlant, invalidPlantJson, pagePath, plantJson, randomPageQuery, randomReadId } from './bench-plants.js';
import type { BenchRequest, HttpLoad } from './http-load.js';
import type { ServiceScenario } from './results-model.js';

/** What the loads of one round share. */
export interface LoadSource {
  /** One sequence for every request of the run: an id is never sent twice. */
  readonly nextId: () => bigint;
  /** One count for every PATCH of the run: a name is never sent twice, so every PATCH writes. */
  readonly nextChange: () => number;
  /** Places in the event feed the `feed` scenarios read from (sampled once its events exist). */
  readonly feedCursors: readonly string[];
}

/** Well-formed, as long as a real token, and none the service or a reference knows. */
export const MADE_UP_TOKEN = `pst_${'m'.repeat(43)}`;

/** The requests of a scenario: a new id for every create and invalid body, a random read otherwise. */
export function createLoad(source: LoadSource, url: string, token: string, scenario: ServiceScenario): HttpLoad {
  const invalidBody = (): BenchRequest => ({
    method: 'POST',
    path: '/plants',
    body: invalidPlantJson(benchPlant(source.nextId())),
  });
  const create = (): BenchRequest => ({
    method: 'POST',
    path: '/plants',
    body: plantJson(benchPlant(source.nextId())),
  });
  const get = (): BenchRequest => ({ method: 'GET', path: `/plants/${randomReadId()}` });
  const list = (): BenchRequest => ({ method: 'GET', path: pagePath(randomPageQuery()) });
  // A new name every time: every PATCH writes (a patch that changes nothing writes nothing).
  const update = (): BenchRequest => ({
    method: 'PATCH',
    path: `/plants/${randomReadId()}`,
    body: `{"name":"Changed ${source.nextChange()}"}`,
  });
  const feed = (): BenchRequest => {
    const cursors = source.feedCursors;
    const after = cursors[Math.floor(Math.random() * cursors.length)];
    return { method: 'GET', path: after === undefined ? '/events?limit=100' : `/events?limit=100&after=${after}` };
  };
  const requests: Record<ServiceScenario, () => BenchRequest> = {
    'invalid-body': invalidBody,
    'invalid-body-traced': invalidBody,
    'reference-invalid-body': invalidBody,
    'fastify-invalid-body': invalidBody,
    create,
    'create-no-access-log': create,
    'create-traced': create,
    'reference-create': create,
    'fastify-create': create,
    // A create a made-up token sends: refused before its body is read.
    'bad-token': create,
    'fastify-bad-token': create,
    'reference-bad-token': create,
    get,
    'get-no-access-log': get,
    'reference-get': get,
    'fastify-get': get,
    list,
    'fastify-list': list,
    update,
    'fastify-update': update,
    feed,
    'fastify-feed': feed,
  };
  const nextRequest = requests[scenario];
  if (scenario === 'bad-token' || scenario === 'fastify-bad-token' || scenario === 'reference-bad-token') {
    return { url, token: MADE_UP_TOKEN, nextRequest, expectedStatus: 401 };
  }
  return { url, token, nextRequest, expectedStatus: nextRequest === invalidBody ? 400 : 200 };
}
