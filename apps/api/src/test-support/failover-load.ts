import { parseJson, stringifyJson } from '@plant-store/schema';
import { Agent, request } from 'undici';

/** The failover suite's traffic: paced creates, reads, updates and deletes, and readiness probes, all recorded. */

/** Wall-clock milliseconds with sub-millisecond precision (comparable with the services' log times). */
export const clock = (): number => performance.timeOrigin + performance.now();

export type RequestKind = 'create' | 'read' | 'update' | 'delete' | 'readyz';

export interface Answer {
  readonly kind: RequestKind;
  /** The service process (its index) that was asked. */
  readonly service: number;
  /** For probes: the API port or the metrics (probe) port. */
  readonly port: 'api' | 'probe';
  readonly id: bigint | undefined;
  readonly startedAt: number;
  readonly endedAt: number;
  /** The HTTP status, or why none came. */
  readonly status: number | 'hung' | 'network';
  readonly retryAfter: string | null;
  readonly body: string;
}

export interface LoadTarget {
  /** `http://127.0.0.1:<port>` of the API. */
  readonly url: string;
  /** `http://127.0.0.1:<port>` of the metrics port (which serves /readyz too). */
  readonly probeUrl: string;
}

export interface LoadOptions {
  readonly services: readonly LoadTarget[];
  /** Bearer tokens with plants:read and plants:write; writers take turns with them. */
  readonly tokens: readonly string[];
  /** Creates per second, over every service. */
  readonly createRate: number;
  readonly readRate: number;
  /** Updates per second (a new name for a plant created and answered 200, one update of a plant at a time). */
  readonly updateRate: number;
  readonly deleteRate: number;
  /** How often each port of each service is probed. */
  readonly probeEveryMs: number;
  /** The first id this load creates (ids go up from it, each sent once). */
  readonly firstId: bigint;
}

export interface Load {
  readonly answers: Answer[];
  /** Ids created and answered 200. */
  readonly acknowledged: Set<bigint>;
  /** Ids deleted and answered 204. */
  readonly deleted: Set<bigint>;
  /** Ids whose delete was not answered 204 (it may or may not have happened). */
  readonly maybeDeleted: Set<bigint>;
  /** Every id a create sent. */
  readonly sent: Set<bigint>;
  /** Every update, in the order sent (a plant's updates one after another: each waits for the one before). */
  readonly updates: SentUpdate[];
  stop(): Promise<void>;
}

/** An update: the name it sent (each update's own) and its answer. */
export interface SentUpdate {
  readonly id: bigint;
  readonly name: string;
  readonly answer: Answer;
}

const CLIENT_TIMEOUT_MS = 5_000;
/** Creates waiting for their answer at most: beyond, the schedule waits (the services are too slow). */
const MAX_CREATES_IN_FLIGHT = 512;
const MERGE_PATCH = 'application/merge-patch+json';

export function startLoad(options: LoadOptions): Load {
  const agent = new Agent({ connections: 64, pipelining: 1, keepAliveTimeout: 30_000 });
  const answers: Answer[] = [];
  const acknowledged = new Set<bigint>();
  const live: bigint[] = [];
  const deleted = new Set<bigint>();
  const maybeDeleted = new Set<bigint>();
  const deleting = new Set<bigint>();
  const updating = new Set<bigint>();
  const sent = new Set<bigint>();
  const updates: SentUpdate[] = [];
  let updatesSent = 0;
  let nextId = options.firstId;
  let running = true;

  async function send(
    kind: RequestKind,
    service: number,
    port: 'api' | 'probe',
    path: string,
    init: { method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; token?: string; body?: string; contentType?: string },
    id?: bigint,
  ): Promise<Answer> {
    const target = options.services[service] as LoadTarget;
    const startedAt = clock();
    const headers: Record<string, string> = {};
    if (init.token) headers.authorization = `Bearer ${init.token}`;
    if (init.body) headers['content-type'] = init.contentType ?? 'application/json';
    let answer: Answer;
    try {
      const response = await request(`${port === 'api' ? target.url : target.probeUrl}${path}`, {
        method: init.method,
        headers,
        ...(init.body === undefined ? {} : { body: init.body }),
        dispatcher: agent,
        headersTimeout: CLIENT_TIMEOUT_MS,
        bodyTimeout: CLIENT_TIMEOUT_MS,
      });
      const body = await response.body.text();
      const retryAfter = response.headers['retry-after'];
      answer = {
        kind,
        service,
        port,
        id,
        startedAt,
        endedAt: clock(),
        status: response.statusCode,
        retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
        body,
      };
    } catch (error) {
      const hung = error instanceof Error && /Timeout/.test(error.name);
      answer = {
        kind,
        service,
        port,
        id,
        startedAt,
        endedAt: clock(),
        status: hung ? 'hung' : 'network',
        retryAfter: null,
        body: String(error),
      };
    }
    answers.push(answer);
    return answer;
  }

  /** Runs `step` `ratePerSecond` times a second until stopped (catching up at most a second). */
  async function paced(ratePerSecond: number, step: () => Promise<void>): Promise<void> {
    if (ratePerSecond <= 0) return;
    const interval = 1_000 / ratePerSecond;
    let next = performance.now();
    while (running) {
      next += interval;
      const wait = next - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      else if (wait < -1_000) next = performance.now();
      if (running) await step();
    }
  }

  const pick = (): bigint | undefined => {
    for (let tries = 0; tries < 8 && live.length > 0; tries++) {
      const index = Math.floor(Math.random() * live.length);
      const id = live[index] as bigint;
      if (deleted.has(id) || maybeDeleted.has(id)) {
        live.splice(index, 1);
        continue;
      }
      if (!deleting.has(id)) return id;
    }
    return undefined;
  };

  const loops: Promise<void>[] = [];
  const services = options.services.length;
  // Creates are sent on schedule, whatever the answers take (open loop, up to MAX_CREATES_IN_FLIGHT
  // waiting), so that the services get the rate asked for during the failover too.
  let createsInFlight = 0;
  let creates = 0;
  const create = async (): Promise<void> => {
    const id = nextId++;
    const service = creates % services;
    const token = options.tokens[creates % options.tokens.length] as string;
    creates++;
    sent.add(id);
    createsInFlight++;
    const answer = await send(
      'create',
      service,
      'api',
      '/plants',
      { method: 'POST', token, body: stringifyJson({ id, name: `plant ${id}`, tag: 'failover' }) },
      id,
    );
    createsInFlight--;
    if (answer.status === 200) {
      acknowledged.add(id);
      live.push(id);
    }
  };
  const inFlight = new Set<Promise<void>>();
  loops.push(
    (async () => {
      const startedAt = performance.now();
      while (running) {
        const due = Math.floor(((performance.now() - startedAt) / 1_000) * options.createRate) - creates;
        for (let n = 0; n < due && createsInFlight < MAX_CREATES_IN_FLIGHT; n++) {
          const request = create();
          inFlight.add(request);
          void request.finally(() => inFlight.delete(request));
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await Promise.all(inFlight);
    })(),
  );
  for (let service = 0; service < services; service++) {
    const token = options.tokens[service % options.tokens.length] as string;
    loops.push(
      paced(options.readRate / services, async () => {
        const id = pick();
        if (id !== undefined) await send('read', service, 'api', `/plants/${id}`, { method: 'GET', token }, id);
      }),
      // Never two updates of a plant at once, so that the last one answered 200 is the one stored
      // (a delete may overtake one: it then answers 404).
      paced(options.updateRate / services, async () => {
        const id = pick();
        if (id === undefined || updating.has(id)) return;
        updating.add(id);
        const name = `plant ${id} update ${updatesSent++}`;
        const body = stringifyJson({ name });
        const answer = await send(
          'update',
          service,
          'api',
          `/plants/${id}`,
          {
            method: 'PATCH',
            token,
            body,
            contentType: MERGE_PATCH,
          },
          id,
        );
        updating.delete(id);
        updates.push({ id, name, answer });
      }),
      paced(options.deleteRate / services, async () => {
        const id = pick();
        if (id === undefined) return;
        deleting.add(id);
        const answer = await send('delete', service, 'api', `/plants/${id}`, { method: 'DELETE', token }, id);
        deleting.delete(id);
        (answer.status === 204 ? deleted : maybeDeleted).add(id);
      }),
    );
    for (const port of ['api', 'probe'] as const) {
      loops.push(
        paced(1_000 / options.probeEveryMs, async () => {
          await send('readyz', service, port, '/readyz', { method: 'GET' });
        }),
      );
    }
  }

  return {
    answers,
    acknowledged,
    deleted,
    maybeDeleted,
    sent,
    updates,
    async stop() {
      running = false;
      await Promise.all(loops);
      await agent.close();
    },
  };
}

/**
 * Whether an answer is one the contract allows for its request (never a 500, never none). A read
 * or an update may find its plant gone when a delete of it was sent meanwhile (`deleted`).
 */
export function isAllowed(answer: Answer, deleted: (id: bigint) => boolean): boolean {
  if (answer.status === 503) return isUnavailableAnswer(answer);
  switch (answer.kind) {
    case 'create':
      return answer.status === 200 && bodyId(answer) === answer.id;
    case 'read':
    case 'update':
      if (answer.status === 404 && answer.id !== undefined && deleted(answer.id)) return true;
      return answer.status === 200 && bodyId(answer) === answer.id;
    case 'delete':
      return answer.status === 204;
    case 'readyz':
      return answer.status === 200;
  }
}

/** A 503 as the contract describes it: the Error shape, `error` 503, a Retry-After in seconds. */
export function isUnavailableAnswer(answer: Answer): boolean {
  if (answer.status !== 503 || !/^\d+$/.test(answer.retryAfter ?? '')) return false;
  try {
    const body = JSON.parse(answer.body) as { error?: unknown; message?: unknown };
    return body.error === 503 && typeof body.message === 'string';
  } catch {
    return false;
  }
}

/** The plant id in an answer's body (exact: a bigint), or undefined. */
function bodyId(answer: Answer): unknown {
  try {
    return (parseJson(answer.body) as { id?: unknown }).id;
  } catch {
    return undefined;
  }
}

export function describeAnswer(answer: Answer): string {
  return `${answer.kind} ${answer.id ?? ''} to service ${answer.service} (${answer.port}) -> ${answer.status} after ${Math.round(answer.endedAt - answer.startedAt)} ms: ${answer.body.slice(0, 200)}`;
}

/** The `q` quantile (0..1) of `values`, nearest rank. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
}
