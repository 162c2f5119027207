/**
 * What the service's code sees of tracing: this interface, never the OpenTelemetry SDK. The
 * instrumented places (the request middleware, the create route, the database hooks, the webhook
 * dispatcher) hold a `Tracing | undefined` and pay one check when it is undefined: tracing off
 * loads no OpenTelemetry module at all (start-tracing.ts imports the implementation on demand).
 * The `import type` lines are erased at compile time.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Span } from '@opentelemetry/api';
import type { ClaimedDelivery, TraceDatabaseCalls } from '@plant-store/db';
import type { PostWebhookResult } from '../webhooks/safe-http.js';

export interface Tracing {
  /**
   * Starts a request's SERVER span: the child of the W3C `traceparent` the request carries, a
   * new trace without one. Named by the method until endRequest knows the route.
   */
  startRequest(method: string, headers: IncomingHttpHeaders): Span;
  /** Runs `fn` with `span` active: what `fn` starts (database calls) becomes its children. */
  runInSpan<T>(span: Span, fn: () => T): T;
  /**
   * Names the span `<METHOD> <route pattern>` (the method alone for `unmatched`: never the raw
   * path), records the status (an error only for 5xx) and ends it.
   */
  endRequest(span: Span, method: string, route: string, status: number): void;
  /** The active span's W3C traceparent (inside a request): what a create stores with its webhook event. */
  activeTraceParent(): string | undefined;
  /** The active span's ids, as log lines carry them; undefined outside a traced request. */
  activeLogFields(): { readonly trace_id: string; readonly span_id: string } | undefined;
  /** For openDatabase({ trace }): CLIENT spans for the calls a traced request makes, and only those. */
  readonly databaseCalls: TraceDatabaseCalls<Span>;
  /** For the webhook dispatcher: a CLIENT span per delivery attempt. */
  readonly deliveries: DeliveryTracing;
  /**
   * Exports what is still buffered and stops, within a couple of seconds whatever the collector
   * does; then gives back the OpenTelemetry globals it registered. Never rejects.
   */
  shutdown(): Promise<void>;
}

export interface DeliveryTracing {
  /**
   * Starts the CLIENT span of one delivery attempt, the child of the creating request's span
   * (the traceparent stored with the event; a new trace without one), and adds its own
   * `traceparent` to the attempt's `headers`.
   */
  start(claimed: ClaimedDelivery, headers: Record<string, string>): Span;
  /** Records how the attempt went (an error unless a 2xx came back) and ends the span. */
  end(span: Span, result: PostWebhookResult): void;
}
