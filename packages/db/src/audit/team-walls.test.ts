import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../database.js';
import { TokenNotFoundError, WebhookLimitError } from '../errors.js';
import { createTestStorage, type TestStorage, testEngines, testToken, testWebhook } from '../testing.js';
import type { AuditActor } from './audit-records.js';

/** Two teams' tokens acting over HTTP, as the service names them in the audit log. */
const RED: AuditActor = { kind: 'token', name: 'red-admin', team: 'red', clientAddress: '203.0.113.7' };
const BLUE: AuditActor = { kind: 'token', name: 'blue-admin', team: 'blue', clientAddress: '198.51.100.9' };

describe.each(testEngines())('walls between teams, and the audit log, on %s', (engine) => {
  let storage: TestStorage;
  let db: Database;

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir });
  });
  beforeEach(async () => {
    // A clean slate for each test's webhooks; tokens and audit events accumulate (names are unique).
    for (const webhook of await db.listWebhooks()) await db.deleteWebhook(webhook.id, { actor: RED });
  });
  afterAll(async () => {
    await db?.close();
    await storage?.dispose();
  });

  const auditAfter = async (after: bigint, team?: string) =>
    (await db.listAuditEvents({ limit: 100, after, ...(team === undefined ? {} : { team }) })).events;
  const lastAuditId = async () => (await db.listAuditEvents({ limit: 100_000 })).events.at(-1)?.id ?? 0n;

  it("keeps each team's subscriptions, deliveries and resends to itself; another team's answer as absent", async () => {
    const red = await db.createWebhook(testWebhook({ url: 'https://red.example/hooks', team: 'red', actor: RED }));
    const blue = await db.createWebhook(testWebhook({ url: 'https://blue.example/hooks', team: 'blue', actor: BLUE }));
    await db.createPlant({ id: 1n, name: 'Shared fern' }, { team: 'red' });
    await db.fanOutEvents({ maxDeliveries: 100 });

    expect((await db.listWebhooks({ team: 'red' })).map((webhook) => webhook.id)).toEqual([red.id]);
    expect((await db.listWebhooks()).map((webhook) => webhook.team).sort()).toEqual(['blue', 'red']);
    expect(await db.listDeliveries(red.id, { limit: 10 }, { team: 'blue' })).toBeNull();
    const redPage = await db.listDeliveries(red.id, { limit: 10 }, { team: 'red' });
    const [delivery] = redPage?.deliveries ?? [];
    if (delivery === undefined) throw new Error('a delivery expected');
    expect(await db.resendDelivery(red.id, delivery.id, { team: 'blue', actor: BLUE })).toBeNull();
    expect(await db.resendDelivery(red.id, delivery.id, { team: 'red', actor: RED })).toMatchObject({
      status: 'pending',
    });
    expect(await db.deleteWebhook(red.id, { team: 'blue', actor: BLUE })).toBe(false);
    expect((await db.listWebhooks()).map((webhook) => webhook.id).sort()).toEqual([red.id, blue.id].sort());
    expect(await db.deleteWebhook(blue.id, { team: 'blue', actor: BLUE })).toBe(true);
    // A claim carries the owning team, for the dispatcher's fairness between teams.
    expect(
      (await db.claimDeliveries({ limit: 10, perWebhookLimit: 10, leaseMs: 60_000 })).map((claim) => claim.team),
    ).toEqual(['red']);
  });

  it("counts each team's subscriptions against its own cap", async () => {
    for (const index of [1, 2]) {
      await db.createWebhook(
        testWebhook({ url: `https://red-${index}.example/`, team: 'red', teamLimit: 2, actor: RED }),
      );
    }
    await expect(
      db.createWebhook(testWebhook({ url: 'https://red-3.example/', team: 'red', teamLimit: 2, actor: RED })),
    ).rejects.toThrow(new WebhookLimitError(2, 'red').message);
    // Red's full cap leaves blue's untouched.
    await db.createWebhook(testWebhook({ url: 'https://blue-1.example/', team: 'blue', teamLimit: 2, actor: BLUE }));
    expect((await db.listWebhooks({ team: 'blue' })).map((webhook) => webhook.url)).toEqual([
      'https://blue-1.example/',
    ]);
  });

  it('records who issued and revoked tokens, created, resent and deleted subscriptions and deleted plants, in each team’s log', async () => {
    const since = await lastAuditId();
    await db.issueToken(testToken({ name: 'red-reader', team: 'red', scopes: ['plants:read'], actor: RED }));
    await expect(db.revokeToken('red-reader', { team: 'blue', actor: BLUE })).rejects.toBeInstanceOf(
      TokenNotFoundError,
    );
    await db.revokeToken('red-reader', { team: 'red', actor: RED });
    const webhook = await db.createWebhook(testWebhook({ url: 'https://audited.example/', team: 'red', actor: RED }));
    await db.deleteWebhook(webhook.id, { team: 'red', actor: RED });
    await db.createPlant({ id: 77n, name: 'Doomed' }, { team: 'red' });
    expect(await db.deletePlant(77n, BLUE)).toMatchObject({ outcome: 'deleted' });
    // Nothing deleted, nothing recorded.
    expect(await db.deletePlant(77n, BLUE)).toEqual({ outcome: 'missing' });

    const red = await auditAfter(since, 'red');
    expect(red.map((event) => [event.action, event.target, event.actor.name, event.actor.team])).toEqual([
      ['token.issued', 'red-reader', 'red-admin', 'red'],
      ['token.revoked', 'red-reader', 'red-admin', 'red'],
      ['webhook.created', webhook.id, 'red-admin', 'red'],
      ['webhook.deleted', webhook.id, 'red-admin', 'red'],
    ]);
    expect(red[0]).toMatchObject({
      team: 'red',
      actor: { kind: 'token', name: 'red-admin', team: 'red' },
      clientAddress: '203.0.113.7',
      details: { scopes: ['plants:read'], expiresAt: null },
    });
    expect(red[2]?.details).toEqual({ url: 'https://audited.example/', eventTypes: ['plant.created'] });
    expect(red[0]?.occurredAt).toBeInstanceOf(Date);
    // The plant's delete is in the deleting team's log.
    expect((await auditAfter(since, 'blue')).map((event) => [event.action, event.target])).toEqual([
      ['plant.deleted', '77'],
    ]);
    // Every team's, in the order written, for platform:admin.
    const all = await auditAfter(since);
    expect(all.map((event) => event.action)).toEqual([
      'token.issued',
      'token.revoked',
      'webhook.created',
      'webhook.deleted',
      'plant.deleted',
    ]);
    const ids = all.map((event) => event.id);
    expect(ids).toEqual([...ids].sort((a, b) => (a < b ? -1 : 1)));
  });

  it('pages the log with limit and after, and deletes only events older than the retention period', async () => {
    const since = await lastAuditId();
    for (const index of [1, 2, 3]) {
      await db.issueToken(testToken({ name: `paged-${index}`, team: 'paging', scopes: ['plants:read'], actor: RED }));
    }
    const first = await db.listAuditEvents({ team: 'paging', limit: 2, after: since });
    expect(first.hasMore).toBe(true);
    const second = await db.listAuditEvents({ team: 'paging', limit: 2, after: first.events.at(-1)?.id });
    expect([...first.events, ...second.events].map((event) => event.target)).toEqual(['paged-1', 'paged-2', 'paged-3']);
    expect(second.hasMore).toBe(false);
    // Nothing is older than a day: nothing goes; everything is older than -1 ms: all go, in batches.
    expect(await db.deleteOldAuditEvents({ olderThanMs: 86_400_000, batchSize: 100 })).toBe(0);
    let deleted = 0;
    for (let batch = await db.deleteOldAuditEvents({ olderThanMs: -1_000, batchSize: 2 }); batch > 0; ) {
      deleted += batch;
      batch = await db.deleteOldAuditEvents({ olderThanMs: -1_000, batchSize: 2 });
    }
    expect(deleted).toBeGreaterThanOrEqual(3);
    expect((await db.listAuditEvents({ limit: 10 })).events).toEqual([]);
  });
});
