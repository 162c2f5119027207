/** Reports how long one repository call took, for metrics. */
export type ObserveDatabaseCall = (call: DatabaseCall) => void;

export interface DatabaseCall {
  /** The repository method: `createPlant`, `listPlants`, `authenticateToken`, ... */
  readonly operation: string;
  readonly durationSeconds: number;
  /** `error` when it threw (a domain error such as a conflict counts too). */
  readonly outcome: 'ok' | 'error';
}

/**
 * What a repository call does, as plain data: its method, and the kind and table of the statement
 * it is for (`INSERT` into `plants` for createPlant), so that a tracer can name it the way
 * database spans are named (`INSERT plants`) without this package knowing of spans.
 */
export interface DatabaseOperation {
  /** The repository method: `createPlant`, `listPlants`, `authenticateToken`, ... */
  readonly name: string;
  /** The SQL command of the call's main statement. */
  readonly statement: 'SELECT' | 'INSERT' | 'UPDATE' | 'DELETE';
  /** The table that statement is about; absent when none (the readiness ping). */
  readonly table?: string;
}

/**
 * Brackets repository calls, for tracing. `start` runs as the call begins, synchronously in the
 * caller's async context (where a tracer finds the request's span); what it returns, if anything
 * (a span, say), is handed to `end` once the call has settled. Undefined: this call is not traced.
 * The package knows nothing more of tracing and loads nothing for it.
 */
export interface TraceDatabaseCalls<TSpan = unknown> {
  start(operation: DatabaseOperation): TSpan | undefined;
  end(span: TSpan, outcome: DatabaseCall['outcome'], error: unknown): void;
}

/** Every operation the repository reports, by method name. */
export const DATABASE_OPERATIONS = {
  createPlant: { name: 'createPlant', statement: 'INSERT', table: 'plants' },
  findPlant: { name: 'findPlant', statement: 'SELECT', table: 'plants' },
  updatePlant: { name: 'updatePlant', statement: 'UPDATE', table: 'plants' },
  listEvents: { name: 'listEvents', statement: 'SELECT', table: 'webhook_events' },
  currentEventCursor: { name: 'currentEventCursor', statement: 'SELECT' },
  readFeedHorizon: { name: 'readFeedHorizon', statement: 'SELECT', table: 'event_feed_horizon' },
  listPlants: { name: 'listPlants', statement: 'SELECT', table: 'plants' },
  deletePlant: { name: 'deletePlant', statement: 'DELETE', table: 'plants' },
  authenticateToken: { name: 'authenticateToken', statement: 'SELECT', table: 'api_tokens' },
  createWebhook: { name: 'createWebhook', statement: 'INSERT', table: 'webhook_subscriptions' },
  listWebhooks: { name: 'listWebhooks', statement: 'SELECT', table: 'webhook_subscriptions' },
  deleteWebhook: { name: 'deleteWebhook', statement: 'DELETE', table: 'webhook_subscriptions' },
  listDeliveries: { name: 'listDeliveries', statement: 'SELECT', table: 'webhook_deliveries' },
  resendDelivery: { name: 'resendDelivery', statement: 'UPDATE', table: 'webhook_deliveries' },
  updateWebhook: { name: 'updateWebhook', statement: 'UPDATE', table: 'webhook_subscriptions' },
  rotateWebhookSecret: { name: 'rotateWebhookSecret', statement: 'UPDATE', table: 'webhook_subscriptions' },
  sendWebhookTest: { name: 'sendWebhookTest', statement: 'INSERT', table: 'webhook_deliveries' },
  resendDeliveries: { name: 'resendDeliveries', statement: 'UPDATE', table: 'webhook_deliveries' },
  listAuditEvents: { name: 'listAuditEvents', statement: 'SELECT', table: 'audit_events' },
  deleteOldAuditEvents: { name: 'deleteOldAuditEvents', statement: 'DELETE', table: 'audit_events' },
  fanOutEvents: { name: 'fanOutEvents', statement: 'INSERT', table: 'webhook_deliveries' },
  webhookReceivers: { name: 'webhookReceivers', statement: 'SELECT', table: 'webhook_subscriptions' },
  claimDeliveries: { name: 'claimDeliveries', statement: 'UPDATE', table: 'webhook_deliveries' },
  recordAttempt: { name: 'recordAttempt', statement: 'UPDATE', table: 'webhook_deliveries' },
  releaseClaim: { name: 'releaseClaim', statement: 'UPDATE', table: 'webhook_deliveries' },
  deleteOldWebhookData: { name: 'deleteOldWebhookData', statement: 'DELETE', table: 'webhook_deliveries' },
  ping: { name: 'ping', statement: 'SELECT' },
} as const satisfies Record<string, DatabaseOperation>;

/** Where repository calls are reported: timings for metrics, spans for traces. */
export interface CallInstruments {
  readonly observe?: ObserveDatabaseCall | undefined;
  readonly trace?: TraceDatabaseCalls | undefined;
}

/**
 * `fn`, instrumented: every call reports its duration and outcome to `observe`, and is bracketed
 * by `trace`. With neither, `fn` itself: an uninstrumented call costs nothing.
 */
export function observed<TArgs extends unknown[], TResult>(
  operation: DatabaseOperation,
  { observe, trace }: CallInstruments,
  fn: (...args: TArgs) => Promise<TResult>,
): (...args: TArgs) => Promise<TResult> {
  if (!observe && !trace) return fn;
  return async (...args) => {
    const span = trace?.start(operation);
    const started = observe ? performance.now() : 0;
    let outcome: DatabaseCall['outcome'] = 'error';
    let failure: unknown;
    try {
      const result = await fn(...args);
      outcome = 'ok';
      return result;
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      if (span !== undefined) trace?.end(span, outcome, failure);
      observe?.({ operation: operation.name, durationSeconds: (performance.now() - started) / 1000, outcome });
    }
  };
}
