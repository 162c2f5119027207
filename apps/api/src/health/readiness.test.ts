import { DatabaseUnavailableError } from '@plant-store/db';
import { describe, expect, it } from 'vitest';
import { createReadiness } from './readiness.js';

/** A ping whose answers the test gives, one per call, counting the calls. */
function scriptedPing() {
  const pending: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];
  return {
    calls: () => pending.length,
    ping: () => new Promise<void>((resolve, reject) => pending.push({ resolve, reject })),
    answer(index: number, error?: unknown) {
      const call = pending[index];
      if (!call) throw new Error(`no ping ${index}`);
      if (error === undefined) call.resolve();
      else call.reject(error);
    },
  };
}

describe('createReadiness', () => {
  it('asks the database once for any number of checks within maxAgeMs, and again after it', async () => {
    let now = 0;
    const script = scriptedPing();
    const readiness = createReadiness({ ping: script.ping, maxAgeMs: 500, now: () => now });
    const first = Array.from({ length: 5_000 }, () => readiness.check());
    expect(script.calls()).toBe(1);
    script.answer(0);
    await Promise.all(first);
    now = 499;
    await Promise.all(Array.from({ length: 5_000 }, () => readiness.check()));
    expect(script.calls()).toBe(1);
    now = 500;
    const later = readiness.check();
    expect(script.calls()).toBe(2);
    script.answer(1);
    await later;
  });

  it('keeps a failure as long as a success, and reports the ping’s own error', async () => {
    let now = 0;
    const script = scriptedPing();
    const readiness = createReadiness({ ping: script.ping, maxAgeMs: 500, now: () => now });
    const failure = new DatabaseUnavailableError();
    const first = readiness.check();
    script.answer(0, failure);
    await expect(first).rejects.toBe(failure);
    now = 100;
    await expect(readiness.check()).rejects.toBe(failure);
    expect(script.calls()).toBe(1);
  });

  it('answers not ready at once after markUnavailable, even with a ready answer kept, without a query', async () => {
    let now = 0;
    const script = scriptedPing();
    const readiness = createReadiness({ ping: script.ping, maxAgeMs: 500, now: () => now });
    const first = readiness.check();
    script.answer(0);
    await first;
    now = 10;
    readiness.markUnavailable();
    await expect(readiness.check()).rejects.toBeInstanceOf(DatabaseUnavailableError);
    expect(script.calls()).toBe(1);
    // Asked again once its time is up.
    now = 510;
    const again = readiness.check();
    script.answer(1);
    await again;
  });

  it('never reports ready from a check that began before markUnavailable', async () => {
    let now = 0;
    const script = scriptedPing();
    const readiness = createReadiness({ ping: script.ping, maxAgeMs: 500, now: () => now });
    const begun = readiness.check();
    readiness.markUnavailable();
    // The old check succeeds (it reached the old primary), after the failure was seen.
    script.answer(0);
    await expect(begun).rejects.toBeInstanceOf(DatabaseUnavailableError);
    now = 100;
    await expect(readiness.check()).rejects.toBeInstanceOf(DatabaseUnavailableError);
    expect(script.calls()).toBe(1);
  });
});
