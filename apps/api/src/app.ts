import Router from '@koa/router';
import type { Database } from '@plant-store/db';
import { WEBHOOK_LIMIT } from '@plant-store/schema';
import Koa from 'koa';
import { createReadiness, READINESS_MAX_AGE_MS, type Readiness } from './health/readiness.js';
import type { AppContext, AppState } from './http/app-state.js';
import type { Logger } from './logger.js';
import type { ServiceMetrics } from './metrics/service-metrics.js';
import { allowOptions } from './middleware/allow-options.js';
import type { FailedAuthenticationLimit } from './middleware/bearer-auth.js';
import { handleErrors } from './middleware/handle-errors.js';
import type { TokenRateLimits } from './middleware/limit-token-rate.js';
import { observeRequests, routeOf } from './middleware/observe-requests.js';
import { createOpenApiDocument } from './openapi/openapi-document.js';
import { auditHandlers } from './routes/audit.js';
import { addConsoleRoutes } from './routes/console.js';
import { addDocsRoutes } from './routes/docs.js';
import { eventHandlers } from './routes/events.js';
import { addHealthRoutes } from './routes/health.js';
import { addMetricsRoute } from './routes/metrics.js';
import { mountOperations } from './routes/mount-operations.js';
import { addOpenApiRoute } from './routes/openapi.js';
import { transferHandlers } from './routes/plant-transfer.js';
import { plantHandlers } from './routes/plants.js';
import { routeRequests } from './routes/static-routes.js';
import { tokenHandlers } from './routes/tokens.js';
import { addVersionRoute } from './routes/version.js';
import { webhookHandlers } from './routes/webhooks.js';
import type { DelegationPolicy } from './tokens/delegation-policy.js';
import type { Tracing } from './tracing/tracing.js';
import type { UrlPolicy } from './webhooks/url-policy.js';

export interface AppDependencies {
  readonly db: Pick<
    Database,
    | 'createPlant'
    | 'findPlant'
    | 'updatePlant'
    | 'listPlants'
    | 'deletePlant'
    | 'importPlants'
    | 'exportPlants'
    | 'listEvents'
    | 'currentEventCursor'
    | 'authenticateToken'
    | 'recordTokenUse'
    | 'knowsToken'
    | 'issueToken'
    | 'listTokens'
    | 'revokeToken'
    | 'ping'
    | 'createWebhook'
    | 'listWebhooks'
    | 'deleteWebhook'
    | 'listDeliveries'
    | 'resendDelivery'
    | 'updateWebhook'
    | 'rotateWebhookSecret'
    | 'sendWebhookTest'
    | 'resendDeliveries'
    | 'listAuditEvents'
  >;
  readonly bodyLimitBytes: number;
  /**
   * What `/readyz` answers (shared with the metrics port's). Absent: one of the app's own, asking
   * `db.ping` at most every READINESS_MAX_AGE_MS.
   */
  readonly readiness?: Readiness;
  /** Access lines and request errors (500s) go here. Absent: no access lines (unit tests). */
  readonly log?: Logger;
  /** Requests are counted and timed here. Absent: they are not. */
  readonly metrics?: ServiceMetrics;
  /** Serve these metrics at `GET /metrics` on this app (default true; false when another listener serves them). */
  readonly serveMetrics?: boolean;
  /** Server spans for requests, database spans under them. Absent: tracing is off. */
  readonly tracing?: Tracing;
  /** Per-token rate limits. Absent: no request is limited (unit tests). */
  readonly rateLimits?: TokenRateLimits;
  /** The limit on failed authentications per client address. Absent: none (unit tests). */
  readonly failedAuthentications?: Omit<FailedAuthenticationLimit, 'knows'>;
  /** Proxies in front whose X-Forwarded-For entries name the client (see clientAddress). Default 0. */
  readonly trustedProxyHops?: number;
  /** Caps per team and what a team's token may grant. Absent: the default caps, no bounds on grants (unit tests). */
  readonly teams?: TeamLimits;
  /** Webhook registration. Absent: the routes still serve, and accept public receivers only. */
  readonly webhooks?: { readonly urlPolicy: UrlPolicy };
}

/** Socket errors that mean the other end went away (reset, closed, or the stream was cut). */
const CLIENT_GONE_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ERR_STREAM_PREMATURE_CLOSE',
  'ERR_STREAM_DESTROYED',
]);

/** Whether `error` is the request's own connection failing under it, not a failure of the service. */
export function isClientGone(error: unknown, ctx: AppContext | undefined): boolean {
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  if (typeof code !== 'string' || !CLIENT_GONE_CODES.has(code)) return false;
  // The same codes from another connection (a database, a receiver) are the service's failures.
  return ctx === undefined || ctx.req.socket.destroyed || ctx.req.destroyed;
}

/** The walls between teams that the routes keep. */
export interface TeamLimits {
  readonly tokensPerTeam: number;
  readonly webhooksPerTeam: number;
  readonly delegation: DelegationPolicy;
}

const UNBOUNDED_TEAMS: TeamLimits = {
  tokensPerTeam: 100,
  webhooksPerTeam: WEBHOOK_LIMIT,
  delegation: { maxLifetimeDays: null, maxRateLimit: null, defaultRateLimit: null },
};

/** Without a word from the configuration, webhooks go to public addresses only. */
const PUBLIC_RECEIVERS_ONLY: UrlPolicy = { allowPrivateNetworks: false };

/** The HTTP application, wired to its dependencies. Does no I/O of its own. */
export function createApp(deps: AppDependencies): Koa<AppState> {
  const { log, metrics, tracing } = deps;
  const metricsRegistry = deps.serveMetrics === false ? undefined : metrics?.registry;
  const app = new Koa<AppState>();
  // Paths are case-sensitive and a trailing slash makes another path (`/PLANTS`, `/plants/1/`: 404).
  const router = new Router<AppState>({ sensitive: true, strict: true });
  addHealthRoutes(router, {
    readiness: deps.readiness ?? createReadiness({ ping: () => deps.db.ping(), maxAgeMs: READINESS_MAX_AGE_MS }),
  });
  const urlPolicy = deps.webhooks?.urlPolicy ?? PUBLIC_RECEIVERS_ONLY;
  const teams = deps.teams ?? UNBOUNDED_TEAMS;
  mountOperations(
    router,
    {
      ...plantHandlers(deps),
      ...transferHandlers({ db: deps.db, maxLineBytes: deps.bodyLimitBytes, tracing: deps.tracing }),
      ...webhookHandlers({ ...deps, urlPolicy, perTeamLimit: teams.webhooksPerTeam }),
      ...tokenHandlers({ ...deps, delegation: teams.delegation, perTeamLimit: teams.tokensPerTeam }),
      ...auditHandlers(deps),
      ...eventHandlers(deps),
    },
    {
      auth: {
        authenticate: deps.db.authenticateToken,
        recordUse: deps.db.recordTokenUse,
        failures: deps.failedAuthentications && { ...deps.failedAuthentications, knows: deps.db.knowsToken },
        trustedProxyHops: deps.trustedProxyHops,
      },
      bodyLimitBytes: deps.bodyLimitBytes,
      rateLimits: deps.rateLimits,
    },
  );
  const documentOptions = { bodyLimitBytes: deps.bodyLimitBytes, metrics: metricsRegistry !== undefined };
  addOpenApiRoute(router, {
    number: createOpenApiDocument(documentOptions),
    string: createOpenApiDocument({ ...documentOptions, int64Form: 'string' }),
  });
  addDocsRoutes(router);
  addConsoleRoutes(router);
  addVersionRoute(router);
  if (metricsRegistry) addMetricsRoute(router, metricsRegistry);

  if (log) {
    app.on('error', (error: unknown, ctx?: AppContext) => {
      if (isClientGone(error, ctx)) {
        // The client hung up mid-request or mid-answer: its business, not a fault of the service.
        log.info(
          {
            requestId: ctx?.state.requestId,
            method: ctx?.method,
            route: ctx && routeOf(ctx),
            code: (error as NodeJS.ErrnoException).code,
          },
          'client disconnected',
        );
        return;
      }
      log.error(
        {
          err: error,
          requestId: ctx?.state.requestId,
          method: ctx?.method,
          route: ctx && routeOf(ctx),
          // Emitted inside the request's span: the line points at its trace.
          ...tracing?.activeLogFields(),
        },
        'request failed',
      );
    });
  }
  app.use(observeRequests({ log, metrics, tracing }));
  app.use(handleErrors());
  // Registered last: the table of routes without parameters is made from the finished router.
  app.use(routeRequests(router));
  app.use(allowOptions());
  app.use(router.allowedMethods());
  return app;
}
