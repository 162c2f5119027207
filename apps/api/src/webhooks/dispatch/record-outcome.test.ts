import { type AttemptOutcome, type ClaimedDelivery, DatabaseUnavailableError } from '@plant-store/db';
import { describe, expect, it } from 'vitest';
import { claimedDelivery } from '../../test-support/claimed-delivery.js';
import { logSink } from '../../test-support/log-sink.js';
import { type AttemptResult, createOutcomeRecorder, type RecordStore } from './record-outcome.js';

/** Keeps what it records; answers as `answer` says (recorded, lease lost, or the database away). */
class FakeRecordStore implements RecordStore {
  readonly recorded: AttemptOutcome[] = [];
  answer: 'recorded' | 'lease-lost' | 'unavailable' = 'recorded';

  async recordAttempt(_claim: ClaimedDelivery, outcome: AttemptOutcome): Promise<boolean> {
    if (this.answer === 'unavailable') throw new DatabaseUnavailableError();
    if (this.answer === 'lease-lost') return false;
    this.recorded.push(outcome);
    return true;
  }
}

const NOW = new Date('2026-12-01T10:00:00.000Z');
const ATTEMPTED_AT = new Date('2026-12-01T09:59:59.000Z');

function recorder(store: FakeRecordStore) {
  const { log, lines } = logSink();
  const results: AttemptResult[] = [];
  const record = createOutcomeRecorder({
    store,
    retryScheduleMs: [50, 100],
    // No jitter: the schedule exactly.
    random: () => 0.5,
    now: () => NOW,
    log,
    observeAttempt: (result) => results.push(result),
  });
  return { record, lines, results };
}

describe('createOutcomeRecorder', () => {
  it('records a 2xx as delivered', async () => {
    const store = new FakeRecordStore();
    const { record, lines, results } = recorder(store);
    const claimed = claimedDelivery();
    await record(claimed, ATTEMPTED_AT, { statusCode: 204, latencyMs: 12, error: null, responseExcerpt: 'thanks' });
    expect(store.recorded).toEqual([
      {
        attemptedAt: ATTEMPTED_AT,
        statusCode: 204,
        latencyMs: 12,
        error: null,
        responseExcerpt: 'thanks',
        delivered: true,
        retryAt: null,
      },
    ]);
    expect(results).toEqual(['delivered']);
    expect(lines).toEqual([
      expect.objectContaining({ level: 'debug', message: 'webhook attempt', outcome: 'delivered', status: 204 }),
    ]);
  });

  it('schedules the next attempt after anything else, a redirect or no answer included, from now', async () => {
    const store = new FakeRecordStore();
    const { record, results } = recorder(store);
    await record(claimedDelivery(), ATTEMPTED_AT, { statusCode: 302, latencyMs: 3, error: 'HTTP 302' });
    await record(claimedDelivery({ attemptNumber: 2 }), ATTEMPTED_AT, {
      statusCode: null,
      latencyMs: 2_000,
      error: 'timed out',
    });
    expect(store.recorded.map(({ delivered, retryAt }) => ({ delivered, retryAt }))).toEqual([
      { delivered: false, retryAt: new Date(NOW.getTime() + 50) },
      { delivered: false, retryAt: new Date(NOW.getTime() + 100) },
    ]);
    expect(results).toEqual(['retrying', 'retrying']);
  });

  it('fails a delivery whose last attempt failed, with a warning naming it and never its secret or body', async () => {
    const store = new FakeRecordStore();
    const { record, lines, results } = recorder(store);
    const claimed = claimedDelivery({ attemptNumber: 3 });
    await record(claimed, ATTEMPTED_AT, { statusCode: 500, latencyMs: 4, error: 'HTTP 500' });
    expect(store.recorded[0]).toMatchObject({ delivered: false, retryAt: null });
    expect(results).toEqual(['failed']);
    expect(lines.filter((line) => line.level === 'warn')).toEqual([
      expect.objectContaining({
        message: 'webhook delivery failed: no attempts left',
        webhookId: claimed.webhookId,
        eventId: claimed.eventId,
        deliveryId: claimed.deliveryId.toString(),
        attempt: 3,
        status: 500,
        error: 'HTTP 500',
      }),
    ]);
    expect(JSON.stringify(lines)).not.toContain(claimed.secrets[0] ?? '');
    expect(JSON.stringify(lines)).not.toContain('Monstera');
  });

  it('says a lease lost at debug, recording nothing', async () => {
    const store = new FakeRecordStore();
    store.answer = 'lease-lost';
    const { record, lines, results } = recorder(store);
    await record(claimedDelivery(), ATTEMPTED_AT, { statusCode: 200, latencyMs: 1, error: null });
    expect(results).toEqual(['lease-lost']);
    expect(lines).toEqual([
      expect.objectContaining({ level: 'debug', message: 'webhook attempt not recorded: lease lost' }),
    ]);
  });

  it('rides out a database away: unrecorded, one warning however many attempts, and says when it records again', async () => {
    const store = new FakeRecordStore();
    store.answer = 'unavailable';
    const { record, lines, results } = recorder(store);
    await record(claimedDelivery(), ATTEMPTED_AT, { statusCode: 200, latencyMs: 1, error: null });
    await record(claimedDelivery(), ATTEMPTED_AT, { statusCode: 200, latencyMs: 1, error: null });
    store.answer = 'recorded';
    await record(claimedDelivery(), ATTEMPTED_AT, { statusCode: 200, latencyMs: 1, error: null });
    expect(results).toEqual(['unrecorded', 'unrecorded', 'delivered']);
    expect(lines.filter((line) => line.level !== 'debug').map(({ level, message }) => ({ level, message }))).toEqual([
      {
        level: 'warn',
        message: 'webhook attempt could not be recorded; the delivery is retried when its lease expires',
      },
      { level: 'info', message: 'webhook attempts are recorded again' },
    ]);
  });
});
