import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from './database.js';
import { TokenNameTakenError } from './errors.js';
import { storageOfPreviousVersion } from './test-support/previous-version.js';
import { createTestStorage, TEST_ACTOR, type TestStorage, testEngines, testToken } from './testing.js';
import { hashToken } from './tokens/token-secret.js';

/** The migration that brings teams, the audit log and case-insensitive token names. */
const TEAMS_MIGRATION = '20261127095239_add_teams_and_audit_log';
const TIMEOUT = 120_000;

const SUBSCRIPTION = '6f1d3a52-7a4e-4c55-9a57-0d5b2e7e2b02';
/** Tokens of the previous version, two of them names differing only in case (it allowed that). */
const TOKENS = { ops: 'pst_previous_ops', OPS: 'pst_previous_OPS', reader: 'pst_previous_reader' } as const;
const hex = (token: string) => Buffer.from(hashToken(token)).toString('hex');

/** What the previous version left behind: tokens, a subscription with a delivery, plants. */
const PREVIOUS_VERSION_ROWS = `
INSERT INTO api_tokens (id, name, token_hash, scopes, created_at) VALUES
  ('00000000-0000-4000-8000-000000000001', 'ops', decode('${hex(TOKENS.ops)}', 'hex'), '{tokens:manage}', '2026-11-01T00:00:00Z'),
  ('00000000-0000-4000-8000-000000000002', 'OPS', decode('${hex(TOKENS.OPS)}', 'hex'), '{plants:read}', '2026-11-02T00:00:00Z'),
  ('00000000-0000-4000-8000-000000000003', 'reader', decode('${hex(TOKENS.reader)}', 'hex'), '{plants:read}', '2026-11-03T00:00:00Z');
INSERT INTO webhook_subscriptions (id, url, secret) VALUES ('${SUBSCRIPTION}', 'https://hooks.example/plants', 'whsec_dGVzdA==');
INSERT INTO plants (id, name, tag) VALUES (9223372036854775807, 'Old fern', 'shade'), (-9223372036854775808, 'Old moss', NULL);
INSERT INTO webhook_events (id, plant_id, payload, fanned_out_at) VALUES ('msg_old', 1, '{"id":1,"name":"a"}', now());
INSERT INTO webhook_deliveries (event_id, subscription_id, status, next_attempt_at, receiver)
  VALUES ('msg_old', '${SUBSCRIPTION}', 'pending', now(), 'https://hooks.example');
`;

describe.each(testEngines())('upgrading to teams and the audit log on %s', (engine) => {
  let storage: TestStorage;
  let db: Database;

  beforeAll(async () => {
    storage = await createTestStorage(engine);
    await storageOfPreviousVersion(storage, TEAMS_MIGRATION, PREVIOUS_VERSION_ROWS);
    // Opening applies the rest, TEAMS_MIGRATION among them.
    db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir });
  }, TIMEOUT);
  afterAll(async () => {
    await db?.close();
    await storage?.dispose();
  });

  it('applies the migration', () => {
    expect(db.appliedMigrations).toContain(TEAMS_MIGRATION);
  });

  it('moves every token to the default team, nothing lost; names differing only in case keep working', async () => {
    const tokens = await db.listTokens({ includeRevoked: true });
    expect(tokens.map((token) => [token.name, token.team, token.scopes])).toEqual([
      ['ops', 'default', ['tokens:manage']],
      ['OPS', 'default', ['plants:read']],
      ['reader', 'default', ['plants:read']],
    ]);
    for (const [name, token] of Object.entries(TOKENS)) {
      expect((await db.authenticateToken(token))?.name).toBe(name);
    }
    // Both old spellings stay revocable by their exact names.
    await db.revokeToken('OPS', { actor: TEST_ACTOR });
    expect(await db.authenticateToken(TOKENS.OPS)).toBeNull();
    expect((await db.authenticateToken(TOKENS.ops))?.name).toBe('ops');
  });

  it('refuses a new name that differs from an old one only in case, the duplicate spelling included', async () => {
    for (const name of ['Ops', 'oPs', 'READER']) {
      await expect(db.issueToken(testToken({ name, scopes: ['plants:read'] }))).rejects.toBeInstanceOf(
        TokenNameTakenError,
      );
    }
    expect((await db.issueToken(testToken({ name: 'ops-2', scopes: ['plants:read'] }))).record.team).toBe('default');
  });

  it('moves the subscription and its pending delivery to the default team, and keeps the plants with no known creator', async () => {
    expect(await db.listWebhooks({ team: 'default' })).toEqual([
      expect.objectContaining({ id: SUBSCRIPTION, team: 'default', url: 'https://hooks.example/plants' }),
    ]);
    const page = await db.listDeliveries(SUBSCRIPTION, { limit: 10 }, { team: 'default' });
    expect(page?.deliveries.map((delivery) => delivery.status)).toEqual(['pending']);
    expect((await db.findPlant(2n ** 63n - 1n))?.plant).toEqual({ id: 2n ** 63n - 1n, name: 'Old fern', tag: 'shade' });
    expect((await db.findPlant(-(2n ** 63n)))?.plant).toEqual({ id: -(2n ** 63n), name: 'Old moss' });
  });
});
