import { describe, expect, it } from 'vitest';
import { logSink } from '../../test-support/log-sink.js';
import { createTroubleReporter, WARN_INTERVAL_MS } from './trouble-reporter.js';

describe('createTroubleReporter', () => {
  it('warns at once, then at most once an interval with how many it kept quiet, and says when it is over', () => {
    const { log, lines } = logSink();
    let at = 1_000;
    const trouble = createTroubleReporter(log, 'cannot claim; retrying', () => at);
    trouble.report(new Error('down'));
    at += 1_000;
    trouble.report(new Error('down'));
    at += 1_000;
    trouble.report(new Error('down'));
    expect(lines).toEqual([expect.objectContaining({ level: 'warn', message: 'cannot claim; retrying' })]);
    expect(lines[0]).not.toHaveProperty('suppressed');

    at += WARN_INTERVAL_MS;
    trouble.report(new Error('still down'), { deliveryId: '7' });
    expect(lines[1]).toMatchObject({
      level: 'warn',
      message: 'cannot claim; retrying',
      deliveryId: '7',
      suppressed: 2,
      err: expect.objectContaining({ message: 'still down' }),
    });

    at += 500;
    trouble.resolved('claims again');
    expect(lines[2]).toMatchObject({ level: 'info', message: 'claims again', afterMs: 2_000 + WARN_INTERVAL_MS + 500 });
    expect(lines).toHaveLength(3);
  });

  it('says nothing of a recovery without trouble, and warns at once of trouble after one', () => {
    const { log, lines } = logSink();
    let at = 0;
    const trouble = createTroubleReporter(log, 'cannot fan out', () => at);
    trouble.resolved('fans out again');
    expect(lines).toEqual([]);

    trouble.report(new Error('down'));
    at += 10;
    trouble.resolved('fans out again');
    at += 10;
    trouble.report(new Error('down again'));
    expect(lines.map(({ level, message }) => ({ level, message }))).toEqual([
      { level: 'warn', message: 'cannot fan out' },
      { level: 'info', message: 'fans out again' },
      { level: 'warn', message: 'cannot fan out' },
    ]);
  });
});
