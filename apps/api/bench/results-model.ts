import type { CpuShare } from './cpu-usage.js';
import type { Measurement } from './measurement.js';
import type { Engine } from './options.js';

/**
 * What a row measures: the ceilings (a bare HTTP server; the raw driver running the service's own
 * statements), and the service answering an invalid body, a create, a read by id and a page of a
 * listing; at the budget concurrency also with access logging off (what an access line costs) and
 * with tracing on (`-traced`: every span exported), and on PostgreSQL the reference (`reference-`:
 * the fixed stack alone, one statement a request; see ceilings/koa-reference.ts). `update` is a
 * `PATCH` of a plant of the read set (a new name each time: every request writes, with its event),
 * `feed` a page of 100 events of `GET /events` from a random place in the feed. `fastify-` rows are
 * the hand-tuned Fastify reference on the same requests (see FASTIFY_COMPARED).
 */
export type Scenario = 'http-ceiling' | 'raw-insert' | 'raw-select' | 'raw-page' | ServiceScenario;
export type ServiceScenario =
  | 'invalid-body'
  | 'create'
  | 'get'
  | 'list'
  | 'update'
  | 'feed'
  | 'create-no-access-log'
  | 'get-no-access-log'
  | 'create-traced'
  | 'invalid-body-traced'
  | 'bad-token'
  | ReferenceScenario
  | FastifyScenario;
export type ReferenceScenario = 'reference-invalid-body' | 'reference-bad-token' | 'reference-create' | 'reference-get';

/**
 * The service's scenarios the Fastify reference (ceilings/fastify-reference-app.ts) answers too,
 * each with its reference twin (`fastify-` before the name), on both engines at the budget
 * concurrency. `bad-token` is a `POST /plants` with a made-up, well-formed token (401).
 */
export const FASTIFY_COMPARED = ['create', 'get', 'list', 'invalid-body', 'bad-token', 'update', 'feed'] as const;
export type FastifyCompared = (typeof FASTIFY_COMPARED)[number];
export type FastifyScenario = `fastify-${FastifyCompared}`;

export function fastifyTwin(scenario: FastifyCompared): FastifyScenario {
  return `fastify-${scenario}`;
}

/** The same requests with tracing on. */
export const TRACED: Readonly<Record<'create' | 'invalid-body', ServiceScenario>> = {
  create: 'create-traced',
  'invalid-body': 'invalid-body-traced',
};

/** The raw-driver ceiling each service scenario is compared with, on the same engine. */
const DATABASE_CEILING: Partial<Record<Scenario, Scenario>> = {
  create: 'raw-insert',
  'create-no-access-log': 'raw-insert',
  'create-traced': 'raw-insert',
  get: 'raw-select',
  'get-no-access-log': 'raw-select',
  list: 'raw-page',
  'reference-create': 'raw-insert',
  'reference-get': 'raw-select',
  'fastify-create': 'raw-insert',
  'fastify-get': 'raw-select',
  'fastify-list': 'raw-page',
};

/** Scenarios answered over HTTP by the service or the reference (the others are ceilings). */
export function isServiceScenario(scenario: Scenario): boolean {
  return scenario !== 'http-ceiling' && !scenario.startsWith('raw-');
}

export interface Point {
  readonly scenario: Scenario;
  /** null for the HTTP ceiling, which touches no database. */
  readonly engine: Engine | null;
  readonly concurrency: number;
  readonly measurement: Measurement;
  /** Highest RSS sampled (every 200 ms) in the process under load during this point, warm-up included. */
  readonly peakRssBytes: number | null;
  /** CPU over the measured window (warm-up excluded), in percent of one core. */
  readonly cpu: CpuShare;
  /**
   * CPU time per answered request of the process under test (the service or the bare HTTP
   * server; the raw loop's own process for a database ceiling), in microseconds.
   */
  readonly cpuMicrosPerRequest: number | null;
  /** Database ceilings: connections used. */
  readonly connections?: number;
}

export interface RowCheck {
  /** Rows in `plants` after the service's run. */
  readonly rows: number | null;
  /** 200 answers to POST /plants, warm-ups included: each must be a row (ids never repeat). */
  readonly created: number;
  /** Requests in flight when a run stopped (concurrency, summed over runs): rows without a counted 200. */
  readonly unanswered: number;
  /** created <= rows <= created + unanswered: no 200 was a replay, and no row came from elsewhere. */
  readonly ok: boolean;
}

/** What the OTLP sink received from one service run with tracing on. */
export interface TracedExport {
  readonly scenario: ServiceScenario;
  /** Requests the service answered in the run's points, warm-ups included. */
  readonly requests: number;
  /** Spans exported (readiness probes' spans included: a few dozen). */
  readonly spans: number;
  /** OTLP export requests. */
  readonly exports: number;
  /** Export bodies the sink could not read as OTLP protobuf (none expected). */
  readonly unreadable: number;
}

export interface EngineRun {
  readonly engine: Engine;
  readonly databaseVersion: string | null;
  /**
   * The service's VmHWM just before it was stopped: its peak RSS over the whole engine run (with
   * tracing measured, the highest of the runs with tracing off).
   */
  readonly servicePeakRssBytes: number | null;
  /** The same for the runs with tracing on; null when tracing was not measured. */
  readonly tracedServicePeakRssBytes: number | null;
  readonly tracedExports: readonly TracedExport[];
  readonly rowCheck: RowCheck | null;
}

export interface Failure {
  readonly stage: string;
  readonly message: string;
}

export function scenarioLabel(scenario: Scenario, engine: Engine | null): string {
  const on = engine === 'pglite' ? 'pglite' : 'postgres';
  const raw = engine === 'pglite' ? 'PGlite' : 'pg';
  switch (scenario) {
    case 'http-ceiling':
      return 'ceiling: bare node:http';
    case 'raw-insert':
      return `ceiling: raw INSERT, ${raw}`;
    case 'raw-select':
      return `ceiling: raw SELECT by id, ${raw}`;
    case 'raw-page':
      return `ceiling: raw page query, ${raw}`;
    case 'invalid-body':
      return `${on}: POST /plants invalid (400)`;
    case 'create':
      return `${on}: POST /plants`;
    case 'get':
      return `${on}: GET /plants/{id}`;
    case 'list':
      return `${on}: GET /plants?limit=20`;
    case 'update':
      return `${on}: PATCH /plants/{id}`;
    case 'feed':
      return `${on}: GET /events?limit=100`;
    case 'create-no-access-log':
      return `${on}: POST /plants, no access log`;
    case 'get-no-access-log':
      return `${on}: GET /plants/{id}, no access log`;
    case 'create-traced':
      return `${on}: POST /plants, tracing on`;
    case 'invalid-body-traced':
      return `${on}: POST /plants invalid (400), tracing on`;
    case 'bad-token':
      return `${on}: POST /plants bad token (401), auth limit off`;
    case 'reference-invalid-body':
      return 'reference: minimal Koa, POST /plants invalid (400)';
    case 'reference-bad-token':
      return 'reference: minimal Koa, POST /plants bad token (401)';
    case 'reference-create':
      return 'reference: minimal Koa, POST /plants';
    case 'reference-get':
      return 'reference: minimal Koa, GET /plants/{id}';
    default: {
      const service = scenario.replace(/^fastify-/, '') as Scenario;
      return `Fastify ${scenarioLabel(service, engine)}`;
    }
  }
}

export function findPoint<P extends Point>(
  points: readonly P[],
  scenario: Scenario,
  engine: Engine | null,
  concurrency: number,
): P | undefined {
  return points.find(
    (point) => point.scenario === scenario && point.engine === engine && point.concurrency === concurrency,
  );
}

export interface Ratios {
  /** The service's rate over the bare node:http rate at the same concurrency. */
  readonly toHttpCeiling: number | null;
  /** The service's rate over its raw-driver ceiling's (insert, select or page) on the same engine and concurrency. */
  readonly toDatabaseCeiling: number | null;
}

export function ratiosOf(point: Point, points: readonly Point[]): Ratios {
  if (!isServiceScenario(point.scenario)) return { toHttpCeiling: null, toDatabaseCeiling: null };
  const rate = point.measurement.perSecond;
  const http = findPoint(points, 'http-ceiling', null, point.concurrency);
  const ceiling = DATABASE_CEILING[point.scenario];
  const database = ceiling === undefined ? undefined : findPoint(points, ceiling, point.engine, point.concurrency);
  return {
    toHttpCeiling: http ? rate / http.measurement.perSecond : null,
    toDatabaseCeiling: database ? rate / database.measurement.perSecond : null,
  };
}
