/**
 * The service beside the hand-tuned Fastify reference (issue 33): per compared row and engine, at
 * the budget concurrency, both rates (median rounds), the ratio service/reference, both CPU times
 * per request, and the reference's rate over the bare node:http server's (within 10% of it, the
 * load generator is the limit, and the ratio to bare node:http says more than the one to Fastify),
 * and where the minimal Koa reference answers the same request (PostgreSQL: creates, reads, the 400
 * and 401 paths), its rate over the Fastify reference's: what the fixed stack alone reaches.
 */
import { BUDGET_CONCURRENCY } from './budget.js';
import { type Column, formatColumns, formatRate } from './figures.js';
import type { Engine } from './options.js';
import {
  FASTIFY_COMPARED,
  type FastifyCompared,
  fastifyTwin,
  findPoint,
  type ReferenceScenario,
  scenarioLabel,
} from './results-model.js';
import type { PointOverRounds } from './rounds.js';

export interface FastifyComparison {
  readonly engine: Engine;
  readonly scenario: FastifyCompared;
  readonly label: string;
  readonly servicePerSecond: number;
  readonly referencePerSecond: number;
  /** Service req/s over the reference's. */
  readonly ratio: number;
  /**
   * The same ratio in each round (both measured in it, minutes apart): on a busy machine a round's
   * pair shares its stretch of noise, so their spread says how far to trust `ratio`. Empty when a
   * round measured one of them only.
   */
  readonly roundRatios: readonly number[];
  readonly serviceCpuMicros: number | null;
  readonly referenceCpuMicros: number | null;
  /** The reference's req/s over the bare node:http server's; null when that was not measured. */
  readonly referenceToHttp: number | null;
  /** The service's req/s over the bare node:http server's; null when that was not measured. */
  readonly serviceToHttp: number | null;
  /** The minimal Koa reference's req/s over the Fastify reference's; null where it was not measured. */
  readonly minimalKoaRatio: number | null;
}

/** The minimal Koa reference's twin of a compared row, where it has one. */
const KOA_TWIN: Partial<Record<FastifyCompared, ReferenceScenario>> = {
  create: 'reference-create',
  get: 'reference-get',
  'invalid-body': 'reference-invalid-body',
  'bad-token': 'reference-bad-token',
};

/** Rows in the order the issue lists them: creates, reads, pages, the 400 and 401 paths, PATCH, the feed. */
export function compareWithFastify(points: readonly PointOverRounds[]): FastifyComparison[] {
  const c = BUDGET_CONCURRENCY;
  const http = findPoint(points, 'http-ceiling', null, c)?.measurement.perSecond;
  return (['postgres', 'pglite'] as const).flatMap((engine) =>
    FASTIFY_COMPARED.flatMap((scenario) => {
      const service = findPoint(points, scenario, engine, c);
      const reference = findPoint(points, fastifyTwin(scenario), engine, c);
      if (service === undefined || reference === undefined) return [];
      const servicePerSecond = service.measurement.perSecond;
      const referencePerSecond = reference.measurement.perSecond;
      const koaTwin = KOA_TWIN[scenario];
      const koa = koaTwin === undefined ? undefined : findPoint(points, koaTwin, engine, c);
      return [
        {
          engine,
          scenario,
          label: scenarioLabel(scenario, engine),
          servicePerSecond,
          referencePerSecond,
          ratio: servicePerSecond / referencePerSecond,
          roundRatios:
            service.rounds.length === reference.rounds.length
              ? service.rounds.map((rate, round) => rate / (reference.rounds[round] ?? Number.NaN))
              : [],
          serviceCpuMicros: service.cpuMicrosPerRequest,
          referenceCpuMicros: reference.cpuMicrosPerRequest,
          referenceToHttp: http === undefined ? null : referencePerSecond / http,
          serviceToHttp: http === undefined ? null : servicePerSecond / http,
          minimalKoaRatio: koa === undefined ? null : koa.measurement.perSecond / referencePerSecond,
        },
      ];
    }),
  );
}

const COLUMNS: readonly Column[] = [
  [`c=${BUDGET_CONCURRENCY}`, 'left'],
  ['service req/s', 'right'],
  ['Fastify req/s', 'right'],
  ['service/Fastify', 'right'],
  ['per round', 'right'],
  ['CPU us/req service / Fastify', 'right'],
  ['x http service / Fastify', 'right'],
  ['minimal Koa/Fastify', 'right'],
];

/** The comparison as a table with its heading and the bare node:http rate, for the summary; none when not measured. */
export function formatFastifyComparison(rows: readonly FastifyComparison[], httpPerSecond: number | null): string[] {
  if (rows.length === 0) return [];
  const micros = (value: number | null) => (value === null ? '-' : value.toFixed(0));
  const ratio = (value: number | null) => (value === null ? '-' : `${value.toFixed(2)}x`);
  const table = formatColumns(
    COLUMNS,
    rows.map((row) => [
      row.label,
      formatRate(row.servicePerSecond),
      formatRate(row.referencePerSecond),
      `${row.ratio.toFixed(2)}x`,
      row.roundRatios.length < 2 ? '' : row.roundRatios.map((ratio) => ratio.toFixed(2)).join(' '),
      `${micros(row.serviceCpuMicros)} / ${micros(row.referenceCpuMicros)}`,
      `${ratio(row.serviceToHttp)} / ${ratio(row.referenceToHttp)}${(row.referenceToHttp ?? 0) >= 0.9 ? ' (load generator bound)' : ''}`,
      ratio(row.minimalKoaRatio),
    ]),
    (index) => index > 0 && rows[index]?.engine !== rows[index - 1]?.engine,
  );
  const http = httpPerSecond === null ? 'not measured' : `${formatRate(httpPerSecond)} req/s`;
  return [
    '',
    `Against the hand-tuned Fastify reference (bench/ceilings/fastify-reference-app.ts), median rounds; bare node:http ${http}:`,
    table,
  ];
}
