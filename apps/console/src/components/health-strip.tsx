import type { PlantStoreClient } from '@plant-store/client';
import { useEffect, useState } from 'preact/hooks';
import { problemOf } from '../api.js';

const CHECK_EVERY_MS = 30_000;

interface Health {
  readonly version: string;
  readonly ready: boolean | null;
  readonly why?: string;
}

/** The service's version and whether it is ready, checked now and every 30 s. Needs no scope. */
export function HealthStrip({ client }: { readonly client: PlantStoreClient }) {
  const [health, setHealth] = useState<Health>({ version: '…', ready: null });
  useEffect(() => {
    let stopped = false;
    const check = async () => {
      const [version, ready] = await Promise.allSettled([client.getServiceVersion(), client.checkReadiness()]);
      if (stopped) return;
      setHealth({
        version: version.status === 'fulfilled' ? version.value.version : 'unknown',
        ready: ready.status === 'fulfilled',
        ...(ready.status === 'rejected' ? { why: problemOf(ready.reason).message } : {}),
      });
    };
    void check();
    const timer = setInterval(check, CHECK_EVERY_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [client]);
  return (
    <section class="health" aria-label="Service health">
      <span>
        Version <strong data-testid="service-version">{health.version}</strong>
      </span>
      <span
        data-testid="service-ready"
        class={health.ready === false ? 'status status-failed' : 'status status-delivered'}
      >
        {health.ready === null ? 'checking…' : health.ready ? 'ready' : `not ready: ${health.why ?? ''}`}
      </span>
    </section>
  );
}
