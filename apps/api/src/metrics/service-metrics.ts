import type { ConnectionEvent, ObserveDatabaseCall } from '@plant-store/db';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { AttemptResult as WebhookAttemptResult } from '../webhooks/dispatcher.js';

/**
 * Bucket bounds in seconds, for a service whose requests and queries take about 1-50 ms: fine
 * below 100 ms, coarse above, so that a slow tail still shows.
 */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** The `method` label: these, else `other`, so that label values stay a fixed set. */
const METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export function methodLabel(method: string): string {
  return METHODS.has(method) ? method : 'other';
}

/** The `route` label of a request no route served (unknown path or method). */
export const UNMATCHED_ROUTE = 'unmatched';

/** A label set's requests counted here and not yet handed to its prom-client counter. */
interface Uncounted<TLabel extends string> {
  readonly labels: Partial<Record<TLabel, string | number>>;
  uncounted: number;
}

/** Hands `counter` what each label set counted since the last scrape (from its collect hook). */
function addUncounted<TLabel extends string>(counter: Counter<TLabel>, children: Iterable<Uncounted<TLabel>>): void {
  for (const child of children) {
    if (child.uncounted === 0) continue;
    counter.inc(child.labels, child.uncounted);
    child.uncounted = 0;
  }
}

export interface FinishedRequest {
  readonly method: string;
  /** The router's pattern (`/plants/:id`) or UNMATCHED_ROUTE; never the raw path. */
  readonly route: string;
  readonly status: number;
  readonly durationSeconds: number;
  /** The name of the token that authenticated it; undefined when none did. */
  readonly token?: string | undefined;
}

/**
 * The service's Prometheus metrics, on a registry of its own (not prom-client's global one): two
 * apps in one process (tests) keep separate counts. Every label has a bounded set of values;
 * none carries a token, a path id or anything else a client chose. A token's name is a label
 * (chosen by whoever issued it, one value per token ever used by this process): never the token.
 */
export interface ServiceMetrics {
  readonly registry: Registry;
  observeRequest(request: FinishedRequest): void;
  /** For `openDatabase({ observe })`: repository call durations. */
  readonly observeDatabaseCall: ObserveDatabaseCall;
  /** For the webhook dispatcher: each delivery attempt's result. */
  observeWebhookAttempt(result: WebhookAttemptResult): void;
  /** For `openDatabase({ onConnectionEvent })`: PostgreSQL connections opened, refused, discarded, failovers. */
  observeConnectionEvent(event: ConnectionEvent): void;
}

export interface ServiceMetricsOptions {
  /** Lines the log has dropped so far (its destination did not keep up): `log_lines_dropped_total`. */
  readonly droppedLogLines?: () => number;
  /** With REDIS_URL: whether the rate-limit counts are shared through Redis now: `rate_limits_shared`. */
  readonly rateLimitsShared?: () => boolean;
}

export function createServiceMetrics({
  droppedLogLines,
  rateLimitsShared,
}: ServiceMetricsOptions = {}): ServiceMetrics {
  const registry = new Registry();
  if (rateLimitsShared) {
    new Gauge({
      name: 'rate_limits_shared',
      help: 'With REDIS_URL: 1 while rate-limit counts are shared through Redis, 0 while this process counts alone (Redis unreachable or not answering).',
      registers: [registry],
      collect() {
        this.set(rateLimitsShared() ? 1 : 0);
      },
    });
  }
  if (droppedLogLines) {
    new Counter({
      name: 'log_lines_dropped_total',
      help: 'Log lines dropped because the log destination (stderr) did not keep up or failed.',
      registers: [registry],
      collect() {
        // A counter's value as the log output counts it, read when scraped.
        this.reset();
        this.inc(droppedLogLines());
      },
    });
  }
  // Process and Node metrics (CPU, memory, event loop lag, GC, handles), computed when scraped.
  collectDefaultMetrics({ register: registry });
  // The two request counters are counted in plain numbers here (see byLabels) and handed to
  // prom-client when scraped: each of its inc() calls hashes its labels again.
  new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
    collect() {
      addUncounted(this, byLabels.values());
    },
  });
  const requestDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving an HTTP request to its response being ready to send, in seconds.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const databaseDuration = new Histogram({
    name: 'db_call_duration_seconds',
    help: 'Duration of database repository calls, by operation and outcome (ok or error), in seconds.',
    labelNames: ['operation', 'outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  new Counter({
    name: 'token_requests_total',
    help: 'Requests a bearer token authenticated, by token name and status code (429: over its rate limit).',
    labelNames: ['token', 'status'] as const,
    registers: [registry],
    collect() {
      addUncounted(this, tokenByLabels.values());
    },
  });
  const webhookAttempts = new Counter({
    name: 'webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts, by result: delivered, retrying, failed (given up), lease-lost, unrecorded.',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  // PostgreSQL connections, by host as DATABASE_URL names it (`host:port`: a few fixed values).
  const connectionsOpened = new Counter({
    name: 'db_connections_opened_total',
    help: 'PostgreSQL connections opened (and, with target_session_attrs, found to qualify), by host: a rise outside start-up is reconnections.',
    labelNames: ['host'] as const,
    registers: [registry],
  });
  const connectionsRefused = new Counter({
    name: 'db_connection_refusals_total',
    help: 'Hosts tried for a new PostgreSQL connection that failed (failed) or did not qualify (read-only, standby), by host and reason.',
    labelNames: ['host', 'reason'] as const,
    registers: [registry],
  });
  const connectionsDiscarded = new Counter({
    name: 'db_connections_discarded_total',
    help: 'PostgreSQL connections closed because their host could no longer serve them (lost, shut down, read-only, or no longer the primary), by host.',
    labelNames: ['host'] as const,
    registers: [registry],
  });
  const failovers = new Counter({
    name: 'db_failovers_total',
    help: 'Times new PostgreSQL connections found the primary on another host than before (failovers seen by this process).',
    registers: [registry],
  });
  const primary = new Gauge({
    name: 'db_primary',
    help: 'With target_session_attrs read-write or primary: 1 for the host new PostgreSQL connections last qualified on.',
    labelNames: ['host'] as const,
    registers: [registry],
  });
  // Per label combination: the labels, the histogram's child (kept: prom-client hashes a labels
  // object on every call otherwise), and the requests not yet handed to the counter. The label
  // sets are bounded (see above), and so are these maps.
  const byLabels = new Map<
    string,
    {
      readonly labels: { method: string; route: string; status: number };
      readonly duration: ReturnType<typeof requestDuration.labels>;
      uncounted: number;
    }
  >();
  const databaseByLabels = new Map<string, ReturnType<typeof databaseDuration.labels>>();
  // Bounded by the tokens that authenticated here, each with the few statuses it got.
  const tokenByLabels = new Map<string, { readonly labels: { token: string; status: number }; uncounted: number }>();
  return {
    registry,
    observeRequest({ method, route, status, durationSeconds, token }) {
      const key = `${method} ${route} ${status}`;
      let child = byLabels.get(key);
      if (!child) {
        const labels = { method: methodLabel(method), route, status };
        child = { labels, duration: requestDuration.labels(labels), uncounted: 0 };
        byLabels.set(key, child);
      }
      child.uncounted += 1;
      child.duration.observe(durationSeconds);
      if (token === undefined) return;
      const tokenKey = `${token} ${status}`;
      let tokenChild = tokenByLabels.get(tokenKey);
      if (!tokenChild) {
        tokenChild = { labels: { token, status }, uncounted: 0 };
        tokenByLabels.set(tokenKey, tokenChild);
      }
      tokenChild.uncounted += 1;
    },
    observeWebhookAttempt(result) {
      webhookAttempts.inc({ result });
    },
    observeConnectionEvent(event) {
      switch (event.kind) {
        case 'opened':
          connectionsOpened.inc({ host: event.host });
          return;
        case 'refused':
          connectionsRefused.inc({ host: event.host, reason: event.reason });
          return;
        case 'discarded':
          connectionsDiscarded.inc({ host: event.host });
          return;
        case 'unavailable':
          return;
        case 'primary':
          if (event.previous !== undefined) {
            failovers.inc();
            primary.set({ host: event.previous }, 0);
          }
          primary.set({ host: event.host }, 1);
          return;
      }
    },
    observeDatabaseCall({ operation, outcome, durationSeconds }) {
      const key = `${operation} ${outcome}`;
      let child = databaseByLabels.get(key);
      if (!child) {
        child = databaseDuration.labels({ operation, outcome });
        databaseByLabels.set(key, child);
      }
      child.observe(durationSeconds);
    },
  };
}
