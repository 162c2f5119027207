import type { Logger } from '../logger.js';
import type { Tracing } from './tracing.js';
import type { TracingOn } from './tracing-config.js';

export interface StartTracingOptions {
  readonly log: Logger;
  /** The PostgreSQL connection string, for the database spans' namespace and server; none for PGlite. */
  readonly databaseUrl: string | undefined;
}

/**
 * Starts exporting traces. The OpenTelemetry SDK is imported here, on demand, as the webhook
 * dispatcher loads its HTTP client: a service with tracing off never loads a module of it (the
 * SDK and an exporter are several MB of memory, and the budget is 250 MB).
 */
export async function startTracing(config: TracingOn, options: StartTracingOptions): Promise<Tracing> {
  const { createTracing } = await import('./otel-tracing.js');
  return createTracing(config, options);
}
