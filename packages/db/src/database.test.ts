import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, migrateDatabase, openDatabase } from './database.js';
import {
  DatabaseUnavailableError,
  DataDirLockedError,
  MigrationsPendingError,
  PlantConflictError,
  TokenLimitError,
  TokenNameTakenError,
  TokenNotFoundError,
} from './errors.js';
import type { DatabaseOperation, TraceDatabaseCalls } from './observe.js';
import { readPage } from './test-support/plant-pages.js';
import { createTestStorage, TEST_ACTOR, type TestStorage, testEngines, testToken, testWebhook } from './testing.js';

describe.each(testEngines())('repository on %s', (engine) => {
  let storage: TestStorage;
  let db: Database;

  beforeAll(async () => {
    storage = await createTestStorage(engine);
    db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir });
  });
  afterAll(async () => {
    await db?.close();
    await storage?.dispose();
  });

  it('applies the migrations on first open', () => {
    expect(db.engine).toBe(engine);
    expect(db.appliedMigrations.length).toBeGreaterThan(0);
  });

  describe('createPlant', () => {
    it('creates, then recognises a replay without writing, its version unchanged', async () => {
      const created = await db.createPlant({ id: 1n, name: 'Fern', tag: 'shade' });
      expect(created).toEqual({
        plant: { id: 1n, name: 'Fern', tag: 'shade' },
        version: expect.any(BigInt),
        created: true,
      });
      expect(await db.createPlant({ id: 1n, name: 'Fern', tag: 'shade' })).toEqual({
        plant: { id: 1n, name: 'Fern', tag: 'shade' },
        version: created.version,
        created: false,
      });
      expect((await db.findPlant(1n))?.version).toBe(created.version);
    });

    it('refuses the same id with other content, telling absent tag from empty tag', async () => {
      await db.createPlant({ id: 2n, name: 'Aloe' });
      await expect(db.createPlant({ id: 2n, name: 'Aloe', tag: '' })).rejects.toBeInstanceOf(PlantConflictError);
      await expect(db.createPlant({ id: 2n, name: 'Aloe vera' })).rejects.toThrow('id 2 already exists');
      expect((await db.findPlant(2n))?.plant).toEqual({ id: 2n, name: 'Aloe' });
    });

    it('keeps both int64 ends and 2^53 + 1 exact', async () => {
      for (const id of [-(2n ** 63n), 2n ** 63n - 1n, 2n ** 53n + 1n]) {
        await db.createPlant({ id, name: `id ${id}` });
        expect((await db.findPlant(id))?.plant).toEqual({ id, name: `id ${id}` });
      }
      expect(await db.findPlant(2n ** 53n)).toBeNull();
    });

    it('lets exactly one of 20 concurrent differing creates of one id win', async () => {
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, index) => db.createPlant({ id: 3n, name: `racer ${index}` })),
      );
      const created = results.filter((result) => result.status === 'fulfilled');
      expect(created).toHaveLength(1);
      for (const result of results) {
        if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(PlantConflictError);
      }
      const winner = created[0]?.status === 'fulfilled' ? created[0].value.plant : undefined;
      expect((await db.findPlant(3n))?.plant).toEqual(winner);
    });
  });

  describe('tokens', () => {
    it('issues a prefixed 256-bit token that authenticates until revoked', async () => {
      const { token, record } = await db.issueToken(
        testToken({ name: 'alpha', scopes: ['plants:read', 'plants:write'] }),
      );
      expect(token).toMatch(/^pst_[A-Za-z0-9_-]{43}$/);
      expect(record).toMatchObject({ name: 'alpha', scopes: ['plants:read', 'plants:write'], revokedAt: null });
      const { id, name, team, scopes, expiresAt, rateLimit } = record;
      expect(team).toBe('default');
      expect(await db.authenticateToken(token)).toEqual({ id, name, team, scopes, expiresAt, rateLimit });
      expect(await db.authenticateToken(`${token}x`)).toBeNull();

      const revoked = await db.revokeToken('alpha', { actor: TEST_ACTOR });
      expect(revoked.revokedAt).toBeInstanceOf(Date);
      expect(await db.authenticateToken(token)).toBeNull();
      await expect(db.revokeToken('alpha', { actor: TEST_ACTOR })).rejects.toBeInstanceOf(TokenNotFoundError);
    });

    it('refuses a second token with a taken name, in any case and from any team', async () => {
      await db.issueToken(testToken({ name: 'beta', scopes: ['plants:read'] }));
      for (const [name, team] of [
        ['beta', 'default'],
        ['BETA', 'default'],
        ['Beta', 'other-team'],
      ] as const) {
        await expect(db.issueToken(testToken({ name, team, scopes: ['plants:read'] }))).rejects.toBeInstanceOf(
          TokenNameTakenError,
        );
      }
      expect((await db.listTokens()).filter((token) => token.name.toLowerCase() === 'beta')).toHaveLength(1);
    });

    it("lists and revokes one team's tokens apart from another's, and counts its cap per team", async () => {
      await db.issueToken(testToken({ name: 'red-1', team: 'red', scopes: ['plants:read'], teamLimit: 2 }));
      await db.issueToken(testToken({ name: 'red-2', team: 'red', scopes: ['plants:read'], teamLimit: 2 }));
      await expect(
        db.issueToken(testToken({ name: 'red-3', team: 'red', scopes: ['plants:read'], teamLimit: 2 })),
      ).rejects.toBeInstanceOf(TokenLimitError);
      // Another team's cap is its own.
      await db.issueToken(testToken({ name: 'blue-1', team: 'blue', scopes: ['plants:read'], teamLimit: 2 }));
      expect((await db.listTokens({ team: 'red' })).map((token) => token.name)).toEqual(['red-1', 'red-2']);
      // Blue cannot revoke red's token: as if it did not exist.
      await expect(db.revokeToken('red-1', { team: 'blue', actor: TEST_ACTOR })).rejects.toBeInstanceOf(
        TokenNotFoundError,
      );
      await db.revokeToken('red-1', { team: 'red', actor: TEST_ACTOR });
      // A revoked token no longer counts against the cap.
      await db.issueToken(testToken({ name: 'red-3', team: 'red', scopes: ['plants:read'], teamLimit: 2 }));
      expect((await db.listTokens({ team: 'red' })).map((token) => token.name)).toEqual(['red-2', 'red-3']);
    });

    it('lists tokens without any secret', async () => {
      const { token } = await db.issueToken(testToken({ name: 'gamma', scopes: ['plants:write'] }));
      const listed = await db.listTokens({ includeRevoked: true });
      expect(listed.map((record) => record.name)).toEqual(expect.arrayContaining(['alpha', 'gamma']));
      expect(JSON.stringify(listed)).not.toContain(token);
      for (const record of listed)
        expect(Object.keys(record).sort()).toEqual([
          'createdAt',
          'expiresAt',
          'id',
          'lastUsedAt',
          'name',
          'rateLimit',
          'revokedAt',
          'scopes',
          'team',
        ]);
      expect(await db.countTokens()).toBe(listed.length);
      // Without revoked ones by default.
      expect((await db.listTokens()).map((record) => record.name)).not.toContain('alpha');
    });
  });

  it('answers ping', async () => {
    await expect(db.ping()).resolves.toBeUndefined();
  });
});

describe.each(testEngines())('listing and deleting on %s', (engine) => {
  let storage: TestStorage;
  let db: Database;
  afterAll(async () => {
    await db?.close();
    await storage?.dispose();
  });

  const ids = [-(2n ** 63n), -5n, 2n ** 53n + 1n, 2n ** 53n + 2n, 2n ** 63n - 1n];

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir });
    for (const [index, id] of ids.entries()) {
      await db.createPlant({ id: id, name: `lister ${index}`, ...(index % 2 === 0 ? { tag: 'list even' } : {}) });
    }
  });

  it('walks every plant in ascending id order, page by page, ids exact', async () => {
    const seen: bigint[] = [];
    let after: bigint | undefined;
    for (;;) {
      const page = readPage(
        await db.listPlants({ limit: 2, tag: 'list even', ...(after === undefined ? {} : { after }) }),
      );
      seen.push(...page.plants.map((plant) => plant.id));
      after = page.plants.at(-1)?.id;
      if (!page.hasMore) break;
    }
    expect(seen).toEqual([-(2n ** 63n), 2n ** 53n + 1n, 2n ** 63n - 1n]);
  });

  it('says whether more follow only when they do', async () => {
    const full = readPage(await db.listPlants({ limit: 3, tag: 'list even' }));
    expect(full.plants.map((plant) => plant.id)).toEqual([-(2n ** 63n), 2n ** 53n + 1n, 2n ** 63n - 1n]);
    expect(full.hasMore).toBe(false);
    expect((await db.listPlants({ limit: 2, tag: 'list even' })).hasMore).toBe(true);
    expect(readPage(await db.listPlants({ limit: 5, after: 2n ** 63n - 1n }))).toEqual({ plants: [], hasMore: false });
  });

  it('filters by exact tag: no tag, other tags and prefixes do not match', async () => {
    expect(readPage(await db.listPlants({ limit: 100, tag: 'list' })).plants).toEqual([]);
    expect(readPage(await db.listPlants({ limit: 100, tag: 'list even' })).plants).toContainEqual({
      id: 2n ** 53n + 1n,
      name: 'lister 2',
      tag: 'list even',
    });
    const untagged = readPage(await db.listPlants({ limit: 100, after: -6n }));
    expect(untagged.plants).toContainEqual({ id: -5n, name: 'lister 1' });
  });

  it('deletes once, then the id is free to be created again with other content and a version it never had', async () => {
    const before = await db.findPlant(2n ** 53n + 2n);
    expect(await db.deletePlant(2n ** 53n + 2n, TEST_ACTOR)).toMatchObject({ outcome: 'deleted' });
    expect(await db.deletePlant(2n ** 53n + 2n, TEST_ACTOR)).toEqual({ outcome: 'missing' });
    expect(await db.findPlant(2n ** 53n + 2n)).toBeNull();
    const reborn = await db.createPlant({ id: 2n ** 53n + 2n, name: 'reborn' });
    expect(reborn).toEqual({
      plant: { id: 2n ** 53n + 2n, name: 'reborn' },
      version: expect.any(BigInt),
      created: true,
    });
    expect(reborn.version).toBeGreaterThan(before?.version ?? 0n);
  });
});

describe.each(testEngines().filter((engine) => engine === 'postgres'))('statement timeout on %s', (engine) => {
  it('has the server cancel a statement stuck behind a lock: DatabaseUnavailableError, and the pool works on', async () => {
    const storage = await createTestStorage(engine, { migrated: true });
    const db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir, poolSize: 1 });
    const holder = new pg.Client({ connectionString: storage.databaseUrl });
    try {
      await holder.connect();
      // Another session inserts id 1 and does not commit: an insert of id 1 must wait for it.
      await holder.query('BEGIN');
      await holder.query(`INSERT INTO public.plants (id, name) VALUES (1, 'Held')`);
      const started = performance.now();
      await expect(db.createPlant({ id: 1n, name: 'Blocked' })).rejects.toBeInstanceOf(DatabaseUnavailableError);
      const waited = performance.now() - started;
      expect(waited).toBeGreaterThan(800);
      expect(waited).toBeLessThan(2_000);
      await holder.query('ROLLBACK');
      // The one pooled connection was cancelled by the server, not abandoned: it serves on.
      expect(await db.createPlant({ id: 1n, name: 'Free now' })).toMatchObject({ created: true });
      expect((await db.findPlant(1n))?.plant).toEqual({ id: 1n, name: 'Free now' });
    } finally {
      await holder.end();
      await db.close();
      await storage.dispose();
    }
  });
});

describe.each(testEngines())('webhooks through the repository on %s', (engine) => {
  it('queues created plants for subscriptions, nudges the dispatcher before answering, and leases, records and lists', async () => {
    const storage = await createTestStorage(engine, { migrated: true });
    const operations: string[] = [];
    let nudges = 0;
    const db = await openDatabase({
      url: storage.databaseUrl,
      dataDir: storage.dataDir,
      onWebhookEvents: () => nudges++,
      observe: (call) => operations.push(call.operation),
    });
    try {
      // No subscription yet: the event goes to the feed only, queued for no fan-out, and no nudge.
      await db.createPlant({ id: 1n, name: 'Unannounced' });
      expect(nudges).toBe(0);
      const webhook = await db.createWebhook(
        testWebhook({ url: 'https://receiver.example/hook', description: 'Shop' }),
      );
      expect(await db.listWebhooks()).toEqual([
        {
          id: webhook.id,
          url: webhook.url,
          description: 'Shop',
          team: 'default',
          createdAt: webhook.createdAt,
          eventTypes: ['plant.created'],
          enabled: true,
          disabledAt: null,
          disabledReason: null,
          previousSecretExpiresAt: null,
        },
      ]);
      await db.createPlant({ id: 2n ** 63n - 1n, name: 'Fern', tag: 'shade' });
      expect(nudges).toBe(1);
      await db.createPlant({ id: 2n ** 63n - 1n, name: 'Fern', tag: 'shade' }); // a replay
      expect(nudges).toBe(1);

      const claimOptions = { limit: 10, perWebhookLimit: 4, leaseMs: 60_000 };
      // Nothing to claim until the dispatcher's fan-out has written the deliveries.
      expect(await db.claimDeliveries(claimOptions)).toEqual([]);
      expect(await db.fanOutEvents({ maxDeliveries: 1024 })).toMatchObject({ events: 1, deliveries: 1 });
      const [claim, ...more] = await db.claimDeliveries(claimOptions);
      expect(more).toEqual([]);
      expect(claim).toMatchObject({
        webhookId: webhook.id,
        secrets: [webhook.secret],
        payload: '{"id":9223372036854775807,"name":"Fern","tag":"shade"}',
        attemptNumber: 1,
      });
      if (!claim) throw new Error('a claim expected');
      const attempt = { attemptedAt: new Date(), statusCode: 200, latencyMs: 4, error: null };
      expect(await db.recordAttempt(claim, { ...attempt, delivered: true, retryAt: null })).toBe(true);
      const page = await db.listDeliveries(webhook.id, { limit: 10 });
      expect(page?.deliveries.map((delivery) => [delivery.plantId, delivery.status, delivery.attempts.length])).toEqual(
        [[2n ** 63n - 1n, 'delivered', 1]],
      );
      expect(await db.resendDelivery(webhook.id, claim.deliveryId, { actor: TEST_ACTOR })).toMatchObject({
        status: 'pending',
      });
      const [again] = await db.claimDeliveries(claimOptions);
      expect(again).toMatchObject({ deliveryId: claim.deliveryId, attemptNumber: 2 });
      if (again) await db.releaseClaim(again);
      expect(await db.deleteWebhook(webhook.id, { actor: TEST_ACTOR })).toBe(true);
      expect(await db.listWebhooks()).toEqual([]);
      // Every webhook call is timed for the metrics, as the plant calls are.
      expect(new Set(operations)).toEqual(
        new Set([
          'createPlant',
          'createWebhook',
          'listWebhooks',
          'fanOutEvents',
          'claimDeliveries',
          'recordAttempt',
          'listDeliveries',
          'resendDelivery',
          'releaseClaim',
          'deleteWebhook',
        ]),
      );
    } finally {
      await db.close();
      await storage.dispose();
    }
  });
});

describe.each(testEngines())('tracing hooks on %s', (engine) => {
  it('brackets each call with its operation as plain data, keeps a create’s traceparent for its deliveries', async () => {
    const storage = await createTestStorage(engine, { migrated: true });
    const traced: Array<{ span: string; operation: DatabaseOperation; outcome?: string; error?: unknown }> = [];
    // A tracer that traces only while `inRequest` (as the service's does only inside a request).
    let inRequest = true;
    const trace: TraceDatabaseCalls<string> = {
      start(operation) {
        if (!inRequest) return undefined;
        traced.push({ span: `span ${traced.length}`, operation });
        return `span ${traced.length - 1}`;
      },
      end(span, outcome, error) {
        const entry = traced.find((candidate) => candidate.span === span);
        if (entry) Object.assign(entry, { outcome, error });
      },
    };
    const db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir, trace });
    try {
      const { token } = await db.issueToken(testToken({ name: 'traced', scopes: ['plants:read'] }));
      // The token directory answers a token it holds: no database call, nothing bracketed.
      expect(await db.authenticateToken(token)).not.toBeNull();
      // One it does not hold is looked up once, then remembered as unknown for a while.
      expect(await db.authenticateToken(`${token}x`)).toBeNull();
      expect(await db.authenticateToken(`${token}x`)).toBeNull();
      const webhook = await db.createWebhook(testWebhook({ url: 'https://receiver.example/hook' }));
      const traceParent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      await db.createPlant({ id: 1n, name: 'Traced' }, { traceParent });
      await db.createPlant({ id: 2n, name: 'Untraced' });
      await expect(db.createPlant({ id: 1n, name: 'Conflict' })).rejects.toBeInstanceOf(PlantConflictError);
      expect((await db.findPlant(1n))?.plant).toMatchObject({ name: 'Traced' });
      await db.ping();
      expect(
        traced.map(({ operation, outcome }) => [operation.statement, operation.table, operation.name, outcome]),
      ).toEqual([
        ['SELECT', 'api_tokens', 'authenticateToken', 'ok'],
        ['INSERT', 'webhook_subscriptions', 'createWebhook', 'ok'],
        ['INSERT', 'plants', 'createPlant', 'ok'],
        ['INSERT', 'plants', 'createPlant', 'ok'],
        ['INSERT', 'plants', 'createPlant', 'error'],
        ['SELECT', 'plants', 'findPlant', 'ok'],
        ['SELECT', undefined, 'ping', 'ok'],
      ]);
      expect(traced[4]?.error).toBeInstanceOf(PlantConflictError);

      // The dispatcher's calls run outside any request: the tracer declines them.
      inRequest = false;
      await db.fanOutEvents({ maxDeliveries: 1024 });
      const claims = await db.claimDeliveries({
        limit: 10,
        perWebhookLimit: 10,
        leaseMs: 60_000,
      });
      expect(claims.map((claim) => [claim.webhookId, claim.payload, claim.traceParent])).toEqual([
        [webhook.id, '{"id":1,"name":"Traced"}', traceParent],
        [webhook.id, '{"id":2,"name":"Untraced"}', null],
      ]);
      expect(traced).toHaveLength(7);
    } finally {
      await db.close();
      await storage.dispose();
    }
  });
});

describe.each(testEngines())('migrations as a separate step on %s', (engine) => {
  it('opens a database without pending migrations only after migrateDatabase applied them, once', async () => {
    const storage = await createTestStorage(engine);
    try {
      const where = { url: storage.databaseUrl, dataDir: storage.dataDir };
      const refused = openDatabase({ ...where, migrate: false });
      await expect(refused).rejects.toBeInstanceOf(MigrationsPendingError);
      await expect(refused).rejects.toThrow(/not up to date: \d+ migrations are not applied \(\d{14}_init, /);

      const applied = await migrateDatabase(where);
      expect(applied[0]).toMatch(/^\d{14}_init$/);
      // Again: nothing left to apply (many replicas or Jobs may run it).
      expect(await migrateDatabase(where)).toEqual([]);

      const db = await openDatabase({ ...where, migrate: false });
      try {
        expect(db.appliedMigrations).toEqual([]);
        expect(await db.createPlant({ id: 1n, name: 'Fern' })).toMatchObject({ created: true });
      } finally {
        await db.close();
      }
    } finally {
      await storage.dispose();
    }
    // Every migration, twice over, on a fresh database: past the default 60 s on a busy machine.
  }, 180_000);
});

describe('the embedded data folder', () => {
  it('is held by one opener at a time, and free again after close', async () => {
    const storage = await createTestStorage('pglite', { migrated: true });
    try {
      const first = await openDatabase({ dataDir: storage.dataDir });
      await expect(openDatabase({ dataDir: storage.dataDir, lockWaitMs: 0 })).rejects.toBeInstanceOf(
        DataDirLockedError,
      );
      await first.close();
      const second = await openDatabase({ dataDir: storage.dataDir, lockWaitMs: 0 });
      expect(second.appliedMigrations).toEqual([]);
      await second.close();
    } finally {
      await storage.dispose();
    }
  });
});
