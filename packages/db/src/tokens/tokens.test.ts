import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Database, openDatabase } from '../database.js';
import { createTestStorage, type TestStorage, testEngines, testToken } from '../testing.js';

describe.each(testEngines())('token expiry, limits and last use on %s', (engine) => {
  let storage: TestStorage;
  let db: Database;

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    // A long interval: these tests flush by hand.
    db = await openDatabase({ url: storage.databaseUrl, dataDir: storage.dataDir, tokenUseFlushMs: 3_600_000 });
  });
  afterAll(async () => {
    vi.useRealTimers();
    await db?.close();
    await storage?.dispose();
  });

  it('keeps expiresAt and a rate limit of its own, and authenticates an expired token for the caller to judge', async () => {
    const expiresAt = new Date('2020-01-01T00:00:00.123Z');
    const { token, record } = await db.issueToken(
      testToken({
        name: 'limited',
        scopes: ['plants:read'],
        expiresAt,
        rateLimit: { requests: 5, perSeconds: 2 },
      }),
    );
    expect(record).toMatchObject({ expiresAt, rateLimit: { requests: 5, perSeconds: 2 }, lastUsedAt: null });
    expect(await db.authenticateToken(token)).toEqual({
      id: record.id,
      name: 'limited',
      team: 'default',
      scopes: ['plants:read'],
      expiresAt,
      rateLimit: { requests: 5, perSeconds: 2 },
    });
    expect((await db.listTokens()).find((listed) => listed.name === 'limited')).toEqual(record);
  });

  it('records last use in one write, never moving it backwards', async () => {
    const { token, record } = await db.issueToken(testToken({ name: 'used', scopes: ['plants:read'] }));
    const other = await db.issueToken(testToken({ name: 'unused', scopes: ['plants:read'] }));
    // Issued here: known at once, no lookup needed.
    expect(db.knowsToken(token)).toBe(true);
    expect(db.knowsToken(`${token}x`)).toBe(false);
    expect(await db.authenticateToken(token)).not.toBeNull();

    vi.useFakeTimers({ now: Date.parse('2026-11-25T12:00:00.000Z'), toFake: ['Date'] });
    db.recordTokenUse(record.id);
    await db.flushTokenUse();
    const lastUsed = async (name: string) =>
      (await db.listTokens()).find((listed) => listed.name === name)?.lastUsedAt ?? null;
    expect(await lastUsed('used')).toEqual(new Date('2026-11-25T12:00:00.000Z'));
    expect(await lastUsed('unused')).toBeNull();
    expect(other.record.lastUsedAt).toBeNull();

    // Another replica's later stamp is not overwritten by an earlier one.
    vi.setSystemTime(Date.parse('2026-11-25T11:59:00.000Z'));
    db.recordTokenUse(record.id);
    await db.flushTokenUse();
    expect(await lastUsed('used')).toEqual(new Date('2026-11-25T12:00:00.000Z'));
    vi.useRealTimers();
  });
});
