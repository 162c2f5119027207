import { hash } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ActiveToken } from './authenticate-token.js';
import { createTokenDirectory, type TokenDirectoryOptions } from './token-directory.js';
import type { AuthenticatedToken } from './token-record.js';

function record(id: string, name = id): AuthenticatedToken {
  return { id, name, team: 'default', scopes: ['plants:read'], expiresAt: null, rateLimit: null };
}

/** A fake table of tokens: what listActive and lookUp read, counting each call. */
function fakeStore(initial: Record<string, AuthenticatedToken>) {
  const tokens = new Map(Object.entries(initial));
  const calls = { listActive: 0, lookUp: 0 };
  let held: Promise<void> | undefined;
  const listActive = async (): Promise<ActiveToken[]> => {
    calls.listActive += 1;
    // The table as it is when the query runs; the answer may arrive later (holdNextLoad).
    const snapshot = [...tokens].map(([token, active]) => ({
      tokenHash: new Uint8Array(hash('sha256', token, 'buffer')),
      record: active,
    }));
    const gate = held;
    held = undefined;
    await gate;
    return snapshot;
  };
  return {
    tokens,
    calls,
    store: {
      listActive,
      lookUp: async (token: string) => {
        calls.lookUp += 1;
        return tokens.get(token) ?? null;
      },
    },
    /** The next load reads the table at once and answers when released, as a slow query would. */
    holdNextLoad(): () => void {
      let release: () => void = () => {};
      held = new Promise<void>((resolve) => {
        release = resolve;
      });
      return release;
    },
  };
}

const OPTIONS: TokenDirectoryOptions = { refreshMs: 5_000, unknownTtlMs: 5_000, maxUnknownEntries: 3 };

afterEach(() => {
  vi.useRealTimers();
});

describe('createTokenDirectory', () => {
  it('knows every active token from the start and answers them with no lookup', async () => {
    const { store, calls } = fakeStore({ pst_a: record('a'), pst_b: record('b') });
    const directory = createTokenDirectory(store, OPTIONS);
    expect(directory.knows('pst_a')).toBe(false);
    await directory.start();
    expect(directory.knows('pst_a')).toBe(true);
    expect(directory.knows('pst_made_up')).toBe(false);
    expect(await directory.authenticate('pst_b')).toEqual(record('b'));
    expect(calls).toEqual({ listActive: 1, lookUp: 0 });
    expect(directory.size()).toBe(2);
    directory.close();
  });

  it('looks an unknown token up once per unknownTtlMs, sharing one lookup between concurrent requests', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const { store, calls } = fakeStore({});
    const directory = createTokenDirectory(store, OPTIONS);
    await directory.start();
    expect(await Promise.all([directory.authenticate('pst_x'), directory.authenticate('pst_x')])).toEqual([null, null]);
    expect(await directory.authenticate('pst_x')).toBeNull();
    expect(calls.lookUp).toBe(1);
    vi.advanceTimersByTime(5_001);
    expect(await directory.authenticate('pst_x')).toBeNull();
    expect(calls.lookUp).toBe(2);
    directory.close();
  });

  it('holds a token issued elsewhere once a lookup found it, and never lets made-up tokens push a real one out', async () => {
    const { store, calls, tokens } = fakeStore({ pst_real: record('real') });
    const directory = createTokenDirectory(store, OPTIONS);
    await directory.start();
    tokens.set('pst_new', record('new'));
    expect(await directory.authenticate('pst_new')).toEqual(record('new'));
    expect(directory.knows('pst_new')).toBe(true);
    for (let index = 0; index < 100; index++) expect(await directory.authenticate(`pst_bogus_${index}`)).toBeNull();
    expect(directory.knows('pst_real') && directory.knows('pst_new')).toBe(true);
    const lookUps = calls.lookUp;
    expect(await directory.authenticate('pst_real')).toEqual(record('real'));
    // Only the last three made-up tokens are remembered (maxUnknownEntries).
    expect(await directory.authenticate('pst_bogus_99')).toBeNull();
    expect(calls.lookUp).toBe(lookUps);
    expect(await directory.authenticate('pst_bogus_0')).toBeNull();
    expect(calls.lookUp).toBe(lookUps + 1);
    directory.close();
  });

  it('refreshes every refreshMs: a token revoked elsewhere goes, one issued elsewhere comes, without a lookup', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { store, calls, tokens } = fakeStore({ pst_a: record('a'), pst_b: record('b') });
    const directory = createTokenDirectory(store, OPTIONS);
    await directory.start();
    tokens.delete('pst_a');
    tokens.set('pst_c', record('c'));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(calls.listActive).toBe(2);
    expect([directory.knows('pst_a'), directory.knows('pst_b'), directory.knows('pst_c')]).toEqual([false, true, true]);
    expect(calls.lookUp).toBe(0);
    directory.close();
  });

  it('keeps what it holds when a refresh fails, and says so', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const failures: unknown[] = [];
    const { store } = fakeStore({ pst_a: record('a') });
    let failing = false;
    const directory = createTokenDirectory(
      {
        ...store,
        listActive: () => (failing ? Promise.reject(new Error('database down')) : store.listActive()),
      },
      { ...OPTIONS, onRefreshError: (error) => failures.push(error) },
    );
    await directory.start();
    failing = true;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(failures).toHaveLength(1);
    expect(directory.knows('pst_a')).toBe(true);
    directory.close();
  });

  it('evicts only the token revoked here, at once, and a refresh begun before the revocation does not bring it back', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { store, tokens, calls, holdNextLoad } = fakeStore({ pst_a: record('a'), pst_b: record('b') });
    const directory = createTokenDirectory(store, OPTIONS);
    await directory.start();
    // A refresh reads the table while pst_a is still active, and its answer arrives after the
    // revocation has committed and been applied here.
    const release = holdNextLoad();
    await vi.advanceTimersByTimeAsync(5_000);
    tokens.delete('pst_a');
    directory.revoked('a');
    expect(directory.knows('pst_a')).toBe(false);
    release();
    await vi.advanceTimersByTimeAsync(0);
    expect(calls.listActive).toBe(2);
    expect(directory.knows('pst_a')).toBe(false);
    expect(directory.knows('pst_b')).toBe(true);
    expect(await directory.authenticate('pst_a')).toBeNull();
    // A revocation of an id it does not hold (a 404 elsewhere) evicts nothing.
    directory.revoked('no-such-id');
    expect(directory.knows('pst_b')).toBe(true);
    directory.close();
  });

  it('holds a token issued here at once, even one tried before it existed', async () => {
    const { store, tokens } = fakeStore({});
    const directory = createTokenDirectory(store, OPTIONS);
    await directory.start();
    expect(await directory.authenticate('pst_fresh')).toBeNull();
    tokens.set('pst_fresh', record('fresh'));
    directory.issued('pst_fresh', record('fresh'));
    expect(await directory.authenticate('pst_fresh')).toEqual(record('fresh'));
    directory.close();
  });
});
