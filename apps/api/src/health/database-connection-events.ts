import type { ConnectionEvent } from '@plant-store/db';
import type { Logger } from '../logger.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';

export interface DatabaseConnectionEventsOptions {
  readonly log: Pick<Logger, 'info' | 'warn'>;
  readonly metrics?: Pick<ServiceMetrics, 'observeConnectionEvent'>;
  /** The database cannot serve now (readiness answers 503 at once: Readiness.markUnavailable). */
  readonly unavailable: () => void;
}

/**
 * What the service does with its PostgreSQL connections' events (openDatabase's
 * `onConnectionEvent`): counts every one (metrics); when a connection is lost or no host qualifies,
 * readiness says so at once, and the log says so once per spell; the log names the primary at the
 * first connection and at every failover. A host refused while the next one qualifies (a standby
 * in the list, TLS falling back to plain) is normal operation: counted, nothing more.
 */
export function databaseConnectionEvents({
  log,
  metrics,
  unavailable,
}: DatabaseConnectionEventsOptions): (event: ConnectionEvent) => void {
  let failing = false;
  return (event) => {
    metrics?.observeConnectionEvent(event);
    switch (event.kind) {
      case 'opened':
        failing = false;
        return;
      case 'refused':
        return;
      case 'primary':
        if (event.previous === undefined) log.info({ primary: event.host }, `database primary is ${event.host}`);
        else {
          log.warn(
            { primary: event.host, previous: event.previous },
            `database failover: the primary is now ${event.host} (was ${event.previous})`,
          );
        }
        return;
      case 'discarded':
      case 'unavailable':
        unavailable();
        if (!failing) {
          failing = true;
          log.warn(
            { ...(event.kind === 'discarded' ? { host: event.host } : {}), err: event.error },
            event.kind === 'discarded'
              ? 'database connection lost: requests that need the database answer 503 until a new one qualifies'
              : 'database unavailable: no host qualifies; requests that need the database answer 503 until one does',
          );
        }
        return;
    }
  };
}
