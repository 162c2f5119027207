import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SqlRunner } from '../sql-runner.js';
import { createTokenUseRecorder, RECORD_TOKEN_USE_SQL } from './token-use.js';

afterEach(() => {
  vi.useRealTimers();
});

/** A SqlRunner that records each statement's values, failing the calls `failures` names (1-based). */
function scriptedSql(failures: ReadonlySet<number> = new Set()) {
  const calls: Array<{ ids: string[]; times: string[] }> = [];
  const sql: SqlRunner = {
    async query<TRow>(text: string, values: unknown[]) {
      expect(text).toBe(RECORD_TOKEN_USE_SQL);
      calls.push({ ids: values[0] as string[], times: values[1] as string[] });
      if (failures.has(calls.length)) throw new Error('database down');
      return { rows: [] as TRow[] };
    },
  };
  return { sql, calls };
}

describe('createTokenUseRecorder', () => {
  it('writes one statement per interval with each token once, at its latest use, and nothing when idle', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-25T10:00:00.000Z') });
    const { sql, calls } = scriptedSql();
    const recorder = createTokenUseRecorder(sql, { flushIntervalMs: 60_000 });
    recorder.record('a');
    vi.advanceTimersByTime(1_000);
    recorder.record('b');
    recorder.record('a');
    expect(calls).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(59_000);
    expect(calls).toEqual([{ ids: ['a', 'b'], times: ['2026-11-25T10:00:01.000Z', '2026-11-25T10:00:01.000Z'] }]);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(calls).toHaveLength(1);
    await recorder.close();
  });

  it('keeps the stamps of a failed write for the next one, reports the failure, and never throws from the timer', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-25T10:00:00.000Z') });
    const { sql, calls } = scriptedSql(new Set([1]));
    const failures: unknown[] = [];
    const recorder = createTokenUseRecorder(sql, {
      flushIntervalMs: 1_000,
      onFlushError: (error) => failures.push(error),
    });
    recorder.record('a');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(failures).toHaveLength(1);
    recorder.record('b');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls.map((call) => call.ids)).toEqual([['a'], ['a', 'b']]);
    expect(calls[1]?.times).toEqual(['2026-11-25T10:00:00.000Z', '2026-11-25T10:00:01.000Z']);
    await recorder.close();
  });

  it('writes what is left at close, once, and reports (not throws) a failure there', async () => {
    const { sql, calls } = scriptedSql(new Set([1]));
    const failures: unknown[] = [];
    const recorder = createTokenUseRecorder(sql, {
      flushIntervalMs: 60_000,
      onFlushError: (error) => failures.push(error),
    });
    recorder.record('a');
    await expect(recorder.close()).resolves.toBeUndefined();
    await recorder.close();
    expect(calls).toHaveLength(1);
    expect(failures).toHaveLength(1);
  });

  it('joins a flush in flight rather than sending a second statement', async () => {
    let release: () => void = () => {};
    const calls: unknown[][] = [];
    const sql: SqlRunner = {
      query<TRow>(_text: string, values: unknown[]) {
        calls.push(values);
        return new Promise<{ rows: TRow[] }>((resolve) => {
          release = () => resolve({ rows: [] });
        });
      },
    };
    const recorder = createTokenUseRecorder(sql, { flushIntervalMs: 60_000 });
    recorder.record('a');
    const first = recorder.flush();
    recorder.record('b');
    const second = recorder.flush();
    expect(second).toBe(first);
    release();
    await first;
    expect(calls).toHaveLength(1);
    const third = recorder.flush();
    release();
    await third;
    expect(calls).toHaveLength(2);
    await recorder.close();
  });
});
