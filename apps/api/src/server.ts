import { createServer, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { type Database, DatabaseUnavailableError, openDatabase } from '@plant-store/db';
import { ErrorCode, stringifyJson } from '@plant-store/schema';
import { createApp } from './app.js';
import { createAuthFailureLimiter } from './auth/auth-failure-limiter.js';
import type { Config, ConnectionsConfig } from './config.js';
import { issueFirstRunToken } from './first-run-token.js';
import { databaseConnectionEvents } from './health/database-connection-events.js';
import { createReadiness, READINESS_MAX_AGE_MS } from './health/readiness.js';
import { endWithin } from './http/close-after-answer.js';
import { guardConnections } from './http/connection-guard.js';
import { isExemptFromRequestTimeout } from './http/long-requests.js';
import { PortUnavailableError, type PortVariable } from './http/port-unavailable-error.js';
import { createRequestLoad } from './http/request-load.js';
import type { Logger, LogOutput } from './logger.js';
import { createMetricsServer } from './metrics/metrics-server.js';
import { createServiceMetrics, type ServiceMetrics } from './metrics/service-metrics.js';
import { createTokenRateLimiter, type TokenRateLimiter } from './rate-limits/token-rate-limiter.js';
import { type RetentionJob, startRetentionJob } from './retention/retention-job.js';
import { METRICS_PATH } from './routes/metrics.js';
import { startTracing } from './tracing/start-tracing.js';
import type { Tracing } from './tracing/tracing.js';
import type { TracingOn } from './tracing/tracing-config.js';
import { createWebhookDispatcher, type WebhookDispatcher } from './webhooks/dispatcher.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** The retention jobs (webhooks, the audit log): every 10 minutes, up to 20 batches of 500 rows of each kind. */
const RETENTION_INTERVAL_MS = 10 * 60 * 1000;
const RETENTION_BATCH_SIZE = 500;
const RETENTION_MAX_BATCHES_PER_RUN = 20;
/** How long a start waits for Redis before serving with per-process limits (it goes on trying). */
const REDIS_READY_WAIT_MS = 2_000;
/** How often the API port's connections are checked against their timeouts. */
const CONNECTIONS_CHECK_INTERVAL_MS = 1_000;
/** Client addresses whose failed authentications are remembered at once (about 100 bytes each). */
const AUTH_FAILURE_MAX_ADDRESSES = 10_000;

export interface RunningServer {
  /** `http://host:port` as bound (the real port when PORT=0). */
  readonly url: string;
  /** Where the Prometheus metrics are served (on `url` or their own port); undefined when off. */
  readonly metricsUrl: string | undefined;
  readonly db: Database;
  /**
   * Stops accepting, lets in-flight requests finish (up to the shutdown timeout), closes the
   * database, then exports the last spans (a couple of seconds at most).
   */
  close(): Promise<void>;
}

export interface StartOptions {
  readonly log: Logger;
  /** Where the first-run token banner goes (stdout by default). */
  readonly print?: (text: string) => void;
  /** The embedded data folder's lock was lost: the caller must stop writing (index.ts exits). */
  readonly onDataDirLockLost?: (error: Error) => void;
  /** The log's destination, when it counts the lines it drops: the metrics show them. */
  readonly logOutput?: Pick<LogOutput, 'droppedLines'>;
}

/** Opens the database (applying migrations), then listens. */
export async function startServer(config: Config, options: StartOptions): Promise<RunningServer> {
  const { log } = options;
  const rateLimiter = createTokenRateLimiter({ redis: config.tokens.redis, log });
  const metrics =
    config.metrics === 'off'
      ? undefined
      : createServiceMetrics({
          ...(options.logOutput ? { droppedLogLines: options.logOutput.droppedLines } : {}),
          ...(config.tokens.redis ? { rateLimitsShared: rateLimiter.shared } : {}),
        });
  // Off (the default): nothing of OpenTelemetry is loaded, and every instrumented place skips it.
  const tracing = config.tracing.enabled
    ? await startTracing(config.tracing, { log, databaseUrl: config.databaseUrl })
    : undefined;
  try {
    return await startServing(config, options, metrics, tracing, rateLimiter);
  } catch (error) {
    await rateLimiter.close();
    await tracing?.shutdown();
    throw error;
  }
}

async function startServing(
  config: Config,
  options: StartOptions,
  metrics: ServiceMetrics | undefined,
  tracing: Tracing | undefined,
  rateLimiter: TokenRateLimiter,
): Promise<RunningServer> {
  const { log } = options;
  // Created once the database is open; until then there is nothing to nudge.
  let dispatcher: WebhookDispatcher | undefined;
  let opened: Database | undefined;
  // `/readyz` on both ports: the database asked at most every READINESS_MAX_AGE_MS, and "not ready"
  // at once when its connections fail (see onDatabaseConnectionEvent).
  const readiness = createReadiness({
    ping: () => (opened ? opened.ping() : Promise.reject(new DatabaseUnavailableError())),
    maxAgeMs: READINESS_MAX_AGE_MS,
  });
  const onConnectionEvent = databaseConnectionEvents({
    log,
    ...(metrics ? { metrics } : {}),
    unavailable: () => readiness.markUnavailable(),
  });
  const db = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
    feedPageCacheBytes: config.feedPageCacheBytes,
    migrate: config.migrateOnStart,
    ...(options.onDataDirLockLost ? { onLockLost: options.onDataDirLockLost } : {}),
    ...(metrics ? { observe: metrics.observeDatabaseCall } : {}),
    ...(tracing ? { trace: tracing.databaseCalls } : {}),
    // New events are due now: deliver them at once rather than at the next poll.
    onWebhookEvents: () => dispatcher?.nudge(),
    tokenUseFlushMs: config.tokens.lastUsedFlushMs,
    webhookDisableAfterMs: config.webhooks.disableAfterDays * DAY_MS,
    // The stamps are kept and written with the next flush: the database may just be away.
    onTokenUseFlushError: (error) => log.warn({ err: error }, 'could not record token last-use times; retrying later'),
    // The tokens loaded before keep working; revocations elsewhere wait for the next reload.
    onTokenRefreshError: (error) => log.warn({ err: error }, 'could not reload the active tokens; retrying in 5 s'),
    onConnectionEvent,
  });
  opened = db;
  if (db.appliedMigrations.length > 0) log.info({ migrations: db.appliedMigrations }, 'applied migrations');

  const { dispatch, retentionDays, disableAfterDays: _, busyRequests, ...delivery } = config.webhooks;
  // Requests in flight on the API port: past `busyRequests`, deliveries give way to them.
  const requestLoad = createRequestLoad(busyRequests);
  if (dispatch) {
    dispatcher = createWebhookDispatcher({
      ...delivery,
      busy: requestLoad.busy,
      // Deliveries in flight at shutdown get no longer than the requests do.
      drainMs: Math.min(delivery.timeoutMs, config.shutdownTimeoutMs),
      store: db,
      log,
      ...(metrics ? { observeAttempt: metrics.observeWebhookAttempt } : {}),
      ...(tracing ? { tracing: tracing.deliveries } : {}),
    });
  }
  // Retention runs where deliveries are sent: every replica that dispatches shares the work.
  const webhookRetention =
    dispatch && retentionDays > 0
      ? startRetentionJob({
          name: 'webhook retention',
          deleteBatch: async (batchSize) => {
            const { deliveries, events } = await db.deleteOldWebhookData({
              olderThanMs: retentionDays * DAY_MS,
              batchSize,
            });
            return { deliveries, events };
          },
          intervalMs: RETENTION_INTERVAL_MS,
          batchSize: RETENTION_BATCH_SIZE,
          maxBatchesPerRun: RETENTION_MAX_BATCHES_PER_RUN,
          log,
        })
      : undefined;
  // The audit log's, on every replica (rows are shared SKIP LOCKED).
  const auditRetention =
    config.auditRetentionDays > 0
      ? startRetentionJob({
          name: 'audit log retention',
          deleteBatch: async (batchSize) => ({
            auditEvents: await db.deleteOldAuditEvents({ olderThanMs: config.auditRetentionDays * DAY_MS, batchSize }),
          }),
          intervalMs: RETENTION_INTERVAL_MS,
          batchSize: RETENTION_BATCH_SIZE,
          maxBatchesPerRun: RETENTION_MAX_BATCHES_PER_RUN,
          log,
        })
      : undefined;
  const retention = [webhookRetention, auditRetention].filter((job) => job !== undefined);
  const { authFailureLimit, trustedProxyHops } = config.tokens;
  const failedAuthentications =
    authFailureLimit === null
      ? undefined
      : {
          limiter: createAuthFailureLimiter({
            maxFailures: authFailureLimit.requests,
            windowMs: authFailureLimit.perSeconds * 1000,
            maxAddresses: AUTH_FAILURE_MAX_ADDRESSES,
          }),
          // Once per address and window: which client is sending tokens that do not work.
          onBlocked: (address: string) =>
            log.warn(
              {
                clientAddress: address,
                failures: authFailureLimit.requests,
                windowSeconds: authFailureLimit.perSeconds,
              },
              'failed authentications over the limit: unknown tokens from this address are refused until the window ends',
            ),
        };
  // Shared limits from the first request: a replica that counted alone at first would let a
  // token past its limit. Redis away: serve anyway, each process limiting alone (logged).
  await rateLimiter.ready(REDIS_READY_WAIT_MS);
  const app = createApp({
    db,
    readiness,
    bodyLimitBytes: config.bodyLimitBytes,
    log,
    rateLimits: { limiter: rateLimiter, defaultPolicy: config.tokens.defaultRateLimit },
    ...(failedAuthentications === undefined ? {} : { failedAuthentications }),
    trustedProxyHops,
    teams: {
      tokensPerTeam: config.teams.tokensPerTeam,
      webhooksPerTeam: config.teams.webhooksPerTeam,
      delegation: {
        maxLifetimeDays: config.teams.maxTokenLifetimeDays,
        maxRateLimit: config.teams.maxTokenRateLimit,
        defaultRateLimit: config.tokens.defaultRateLimit,
      },
    },
    webhooks: { urlPolicy: { allowPrivateNetworks: delivery.allowPrivateNetworks } },
    ...(metrics ? { metrics, serveMetrics: config.metrics === 'app' } : {}),
    ...(tracing ? { tracing } : {}),
  });
  const server = createServer(serverOptions(config.connections), requestLoad.track(app.callback()));
  // At the cap a newcomer evicts the longest-waiting connection of the busiest client address; one
  // without a request in progress for the headers (or keep-alive) timeout is closed.
  guardConnections(server, {
    max: config.connections.max,
    idleMs: Math.max(config.connections.headersTimeoutMs, config.connections.keepAliveTimeoutMs),
    checkIntervalMs: CONNECTIONS_CHECK_INTERVAL_MS,
  });
  server.on('clientError', answerClientError);
  // Probes and the scraper on their own port, so a flood of the API's port cannot starve them.
  const metricsServer =
    metrics && typeof config.metrics === 'object'
      ? createMetricsServer(metrics.registry, log, { ready: () => readiness.check() })
      : undefined;
  let url: string;
  let metricsUrl: string | undefined;
  try {
    url = await listen(server, config.port, config.host, 'PORT');
    if (metricsServer && typeof config.metrics === 'object') {
      metricsUrl = `${await listen(metricsServer, config.metrics.port, config.host, 'METRICS_PORT')}${METRICS_PATH}`;
    } else if (metrics) {
      metricsUrl = `${url}${METRICS_PATH}`;
    }
    log.info(
      {
        url,
        database: db.engine,
        metrics: metricsUrl ?? 'off',
        tracing: config.tracing.enabled ? describeTracing(config.tracing) : 'off',
        webhookDispatch: dispatcher !== undefined,
        rateLimits: config.tokens.redis ? 'shared (Redis)' : 'per process',
        // The runtime it really runs on (the project pins one: see the README's Runtime section).
        node: process.version,
      },
      'listening',
    );
    dispatcher?.start();
    await issueFirstRunToken(db, {
      production: config.production,
      baseUrl: url,
      print: options.print ?? ((text) => process.stdout.write(text)),
    });
  } catch (error) {
    for (const listener of [server, metricsServer]) {
      listener?.close();
      listener?.closeAllConnections();
    }
    await dispatcher?.close();
    await Promise.all(retention.map((job) => job.stop()));
    await db.close();
    throw error;
  }

  let closing: Promise<void> | undefined;
  return {
    url,
    metricsUrl,
    db,
    close() {
      closing ??= shutDown(server, metricsServer, dispatcher, retention, db, config.shutdownTimeoutMs, log)
        .then(() => rateLimiter.close())
        .finally(
          // Last: the spans of the requests and deliveries that finished during shutdown go too.
          () => tracing?.shutdown(),
        );
      return closing;
    },
  };
}

/**
 * Node's HTTP server with the configured timeouts. Connections are checked against the header and
 * request timeouts every second (Node's default is every 30 s, which would let a half-sent request
 * hold its descriptor for up to 30 s past its timeout).
 */
export function serverOptions(connections: ConnectionsConfig): ServerOptions {
  return {
    headersTimeout: connections.headersTimeoutMs,
    requestTimeout: connections.requestTimeoutMs,
    keepAliveTimeout: connections.keepAliveTimeoutMs,
    connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS,
  };
}

/** What the `listening` line says of tracing: where spans go (never the URL's credentials or headers). */
function describeTracing(tracing: TracingOn): string {
  const url = new URL(tracing.exporter.url);
  return `${tracing.exporter.protocol} to ${url.origin}${url.pathname}`;
}

/**
 * Listens; resolves with `http://host:port` as bound (the real port when `port` is 0). A port
 * that is taken (or not allowed) rejects with PortUnavailableError naming `variable`.
 */
function listen(server: Server, port: number, host: string, variable: PortVariable): Promise<string> {
  return new Promise((resolve, reject) => {
    const fail = (error: Error) => reject(PortUnavailableError.from(error, variable, port, host) ?? error);
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      const bound = (server.address() as AddressInfo).port;
      resolve(`http://${host.includes(':') ? `[${host}]` : host}:${bound}`);
    });
  });
}

/** Node's parser errors for a chunked body whose framing is malformed (a chunk size such as `0x0`). */
const CHUNK_FRAMING_ERRORS: ReadonlySet<string> = new Set(['HPE_INVALID_CHUNK_SIZE', 'HPE_CHUNK_EXTENSIONS_OVERFLOW']);

/**
 * Requests Node's HTTP parser rejects still get the Error shape, not an empty 400: before Koa sees
 * them (a malformed request line, headers too large, a body longer than its Content-Length), and
 * also while Koa handles them, when the body's framing is malformed (a bad chunk size) and nothing
 * of the answer is sent yet. Then the request in Koa sees its connection end (its body cut short:
 * a 400 nobody receives, no error logged), and whatever it answers is not sent.
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  // An import's body is sent for as long as its data takes (see exemptFromRequestTimeout).
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && isExemptFromRequestTimeout(socket)) return;
  // A request that timed out or a reset connection has nobody left to answer.
  const gone = error.code === 'ECONNRESET' || error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
  const inFlight = (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
  if (gone || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const message =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 'request headers are too large'
      : CHUNK_FRAMING_ERRORS.has(error.code ?? '')
        ? 'malformed chunked request body: invalid chunk size or extensions'
        : 'malformed HTTP request';
  const body = stringifyJson({ error: ErrorCode.InvalidRequest, message });
  socket.write(
    `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  endWithin(socket);
}

async function shutDown(
  server: Server,
  metricsServer: Server | undefined,
  dispatcher: WebhookDispatcher | undefined,
  retention: readonly RetentionJob[],
  db: Database,
  timeoutMs: number,
  log: Logger,
): Promise<void> {
  log.info('shutting down');
  // A scrape is short and can be retried: the metrics listener just goes.
  metricsServer?.close();
  metricsServer?.closeAllConnections();
  // Alongside the requests, not after them, so that shutdown stays within its timeout:
  // deliveries in flight finish or give their leases back (another replica takes them at once).
  // Events that creates still in flight record are left for the next dispatcher to find.
  const dispatcherClosed = dispatcher?.close();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Keep-alive connections go as soon as they are idle; busy ones finish their request first.
  const sweep = setInterval(() => server.closeIdleConnections(), 100);
  const deadline = new Promise<'timeout'>((resolve) => setTimeout(resolve, timeoutMs, 'timeout').unref());
  if ((await Promise.race([closed, deadline])) === 'timeout') {
    log.error({ timeoutMs }, 'shutdown timeout: closing connections with requests still in flight');
    server.closeAllConnections();
    await closed;
  }
  clearInterval(sweep);
  await dispatcherClosed;
  await Promise.all(retention.map((job) => job.stop()));
  await db.close();
  log.info('stopped');
}
