import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTokenCache } from './token-cache.js';
import type { AuthenticatedToken } from './token-record.js';

const record: AuthenticatedToken = {
  id: '00000000-0000-0000-0000-000000000001',
  name: 'cached',
  scopes: ['plants:read'],
  expiresAt: null,
  rateLimit: null,
};

afterEach(() => {
  vi.useRealTimers();
});

describe('createTokenCache', () => {
  it('looks a token up once per TTL, and shares one lookup between concurrent requests', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const lookUp = vi.fn(async (token: string) => (token === 'pst_known' ? record : null));
    const cache = createTokenCache(lookUp, { ttlMs: 1_000, maxEntries: 10 });
    const answers = await Promise.all([cache.authenticate('pst_known'), cache.authenticate('pst_known')]);
    expect(answers).toEqual([record, record]);
    expect(await cache.authenticate('pst_unknown')).toBeNull();
    expect(await cache.authenticate('pst_unknown')).toBeNull();
    expect(lookUp).toHaveBeenCalledTimes(2);
    vi.advanceTimersByTime(1_001);
    expect(await cache.authenticate('pst_known')).toEqual(record);
    expect(lookUp).toHaveBeenCalledTimes(3);
  });

  it('does not remember failures', async () => {
    const lookUp = vi.fn().mockRejectedValueOnce(new Error('database down')).mockResolvedValue(record);
    const cache = createTokenCache(lookUp, { ttlMs: 60_000, maxEntries: 10 });
    await expect(cache.authenticate('pst_known')).rejects.toThrow('database down');
    expect(await cache.authenticate('pst_known')).toEqual(record);
    expect(lookUp).toHaveBeenCalledTimes(2);
  });

  it('forgets everything on clear, and the oldest answer beyond maxEntries', async () => {
    const lookUp = vi.fn(async () => record);
    const cache = createTokenCache(lookUp, { ttlMs: 60_000, maxEntries: 2 });
    await cache.authenticate('pst_a');
    await cache.authenticate('pst_b');
    await cache.authenticate('pst_c'); // pst_a is dropped
    await cache.authenticate('pst_b');
    expect(lookUp).toHaveBeenCalledTimes(3);
    await cache.authenticate('pst_a');
    expect(lookUp).toHaveBeenCalledTimes(4);
    cache.clear();
    await cache.authenticate('pst_b');
    expect(lookUp).toHaveBeenCalledTimes(5);
  });

  it('looks up every time with a TTL of 0', async () => {
    const lookUp = vi.fn(async () => record);
    const cache = createTokenCache(lookUp, { ttlMs: 0, maxEntries: 10 });
    await cache.authenticate('pst_a');
    await cache.authenticate('pst_a');
    expect(lookUp).toHaveBeenCalledTimes(2);
  });

  it('never lets made-up tokens push a real one out: unknown answers have their own bound', async () => {
    const lookUp = vi.fn(async (token: string) => (token === 'pst_real' ? record : null));
    const cache = createTokenCache(lookUp, { ttlMs: 60_000, maxEntries: 2, maxNegativeEntries: 3 });
    expect(await cache.authenticate('pst_real')).toEqual(record);
    for (let index = 0; index < 100; index++) expect(await cache.authenticate(`pst_bogus_${index}`)).toBeNull();
    expect(lookUp).toHaveBeenCalledTimes(101);
    // Still remembered: no lookup for the real token.
    expect(await cache.authenticate('pst_real')).toEqual(record);
    expect(lookUp).toHaveBeenCalledTimes(101);
    // The made-up ones keep only the last three.
    expect(await cache.authenticate('pst_bogus_99')).toBeNull();
    expect(lookUp).toHaveBeenCalledTimes(101);
    expect(await cache.authenticate('pst_bogus_0')).toBeNull();
    expect(lookUp).toHaveBeenCalledTimes(102);
  });

  it('knows the real tokens it has seen, past their TTL too, and never a made-up or revoked one', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    let revoked = false;
    const lookUp = vi.fn(async (token: string) => (token === 'pst_real' && !revoked ? record : null));
    const cache = createTokenCache(lookUp, { ttlMs: 1_000, maxEntries: 2, maxNegativeEntries: 2 });
    expect(cache.knows('pst_real')).toBe(false);
    await cache.authenticate('pst_real');
    await cache.authenticate('pst_bogus');
    expect(cache.knows('pst_real')).toBe(true);
    expect(cache.knows('pst_bogus')).toBe(false);
    // Stale: still known (a lookup will judge it again), and looked up again when asked.
    vi.advanceTimersByTime(5_000);
    expect(cache.knows('pst_real')).toBe(true);
    revoked = true;
    expect(await cache.authenticate('pst_real')).toBeNull();
    expect(lookUp).toHaveBeenCalledTimes(3);
    expect(cache.knows('pst_real')).toBe(false);
  });

  it('forgets only the unknown answers on forgetUnknown (a token issued here may have been tried before)', async () => {
    let issued = false;
    const lookUp = vi.fn(async (token: string) => (token === 'pst_real' || issued ? record : null));
    const cache = createTokenCache(lookUp, { ttlMs: 60_000, maxEntries: 10 });
    await cache.authenticate('pst_real');
    expect(await cache.authenticate('pst_new')).toBeNull();
    issued = true;
    cache.forgetUnknown();
    expect(await cache.authenticate('pst_new')).toEqual(record);
    await cache.authenticate('pst_real');
    expect(lookUp).toHaveBeenCalledTimes(3);
  });
});
