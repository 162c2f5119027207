/**
 * Webhooks end to end across processes: the built service killed with SIGKILL mid-delivery and
 * restarted, and two replicas sharing one PostgreSQL; real receivers on real ports. A file of its
 * own beside webhook-delivery.test.ts: it spends its time waiting on processes, and runs beside it.
 */
import { openDatabase } from '@plant-store/db';
import { testEngines, testToken } from '@plant-store/db/testing';
import { parseJson } from '@plant-store/schema';
import { describe, expect, it } from 'vitest';
import { failOnContractViolations } from './test-support/checked-fetch.js';
import { serviceLifecycle } from './test-support/service-lifecycle.js';
import { type ServiceProcess, startServiceProcess, storageEnv } from './test-support/service-process.js';
import { createPlant, eventually, FAST_WEBHOOKS, SCOPES, subscribe } from './test-support/webhook-end-to-end.js';
import { startWebhookReceiver } from './test-support/webhook-receiver.js';

failOnContractViolations();

describe.each(testEngines())('webhook delivery across crashes on %s', (engine) => {
  const { cleanups, storage: newStorage } = serviceLifecycle(engine);

  it('delivers events committed before a SIGKILL, and those in flight when it struck, after a restart', {
    timeout: 120_000,
  }, async () => {
    const storage = await newStorage();
    const env = { ...storageEnv(storage), ...FAST_WEBHOOKS, NODE_ENV: 'production', ALLOW_EMBEDDED_DATABASE: 'true' };
    // A token issued before any service process holds the database (PGlite allows one).
    const db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir });
    const { token } = await db.issueToken(testToken({ name: 'crash', scopes: SCOPES }));
    await db.close();
    const hook = await startWebhookReceiver();
    cleanups.push(() => hook.close());

    async function start(extra: Record<string, string> = {}): Promise<ServiceProcess> {
      const service = await startServiceProcess({ ...env, ...extra });
      cleanups.push(() => service.kill());
      return service;
    }

    // 1. Not dispatching: events are committed with their plants, then the process dies.
    const first = await start({ WEBHOOKS_DISPATCH: 'false' });
    await subscribe(first.url, token, hook.url);
    const ids = [1n, 2n, 3n];
    for (const id of ids) await createPlant(first.url, token, { id, name: `plant ${id}` });
    first.child.kill('SIGKILL');
    await first.exited;

    // 2. Dispatching to a receiver that never answers: killed with the deliveries in flight.
    hook.answer(() => 'hang');
    const second = await start();
    await hook.waitFor(ids.length);
    second.child.kill('SIGKILL');
    await second.exited;

    // 3. The receiver answers now; once the dead process's leases lapse, every event arrives.
    hook.answer(() => 200);
    const third = await start();
    const okAnswered = await eventually(async () => {
      const delivered = new Set(
        hook.received.slice(ids.length).map((event) => (parseJson(event.body) as { id: bigint }).id),
      );
      return ids.every((id) => delivered.has(id)) ? delivered : undefined;
    }, 30_000);
    expect(okAnswered).toEqual(new Set(ids));
    // The same event ids on the attempt cut short and the one that succeeded.
    const eventIds = (from: number, to: number) =>
      new Set(hook.received.slice(from, to).map((event) => event.headers['webhook-id']));
    expect(eventIds(ids.length, hook.received.length)).toEqual(eventIds(0, ids.length));
    await third.kill();
  });
});

describe.skipIf(!testEngines().includes('postgres'))('webhook delivery from two replicas on one PostgreSQL', () => {
  const { cleanups, storage: newStorage } = serviceLifecycle('postgres');

  it('delivers each event once per attempt, never twice at once', { timeout: 120_000 }, async () => {
    const storage = await newStorage();
    const env = { ...storageEnv(storage), ...FAST_WEBHOOKS, NODE_ENV: 'production', ALLOW_EMBEDDED_DATABASE: 'true' };
    const db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir });
    cleanups.push(() => db.close());
    const { token } = await db.issueToken(testToken({ name: 'replicas', scopes: SCOPES }));
    const hook = await startWebhookReceiver();
    cleanups.push(() => hook.close());
    // The first attempt of every event fails, the second succeeds: two per event, no more.
    const seen = new Set<string>();
    hook.answer((event) => {
      const id = event.headers['webhook-id'] ?? '';
      if (seen.has(id)) return 200;
      seen.add(id);
      return 500;
    });

    const replicas = await Promise.all([startServiceProcess(env), startServiceProcess(env)]);
    for (const replica of replicas) cleanups.push(() => replica.kill());
    await subscribe(replicas[0]?.url ?? '', token, hook.url);

    const ids = Array.from({ length: 100 }, (_, index) => 2n ** 62n + BigInt(index));
    await Promise.all(
      ids.map((id, index) => createPlant(replicas[index % 2]?.url ?? '', token, { id, name: `plant ${id}` })),
    );
    await hook.waitFor(2 * ids.length, 30_000);
    // Time for any duplicate to show up.
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    const perEvent = new Map<string, number>();
    for (const event of hook.received) {
      const id = event.headers['webhook-id'] ?? '';
      perEvent.set(id, (perEvent.get(id) ?? 0) + 1);
    }
    expect(perEvent.size).toBe(ids.length);
    expect([...perEvent.values()].filter((count) => count !== 2)).toEqual([]);
    const plantIds = new Set(hook.received.map((event) => (parseJson(event.body) as { id: bigint }).id));
    expect(plantIds).toEqual(new Set(ids));
  });
});
