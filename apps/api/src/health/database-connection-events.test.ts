import type { ConnectionEvent } from '@plant-store/db';
import { describe, expect, it } from 'vitest';
import { databaseConnectionEvents } from './database-connection-events.js';

function recorder() {
  const lines: Array<[string, Record<string, unknown>, string]> = [];
  const events: ConnectionEvent[] = [];
  let unavailable = 0;
  const handle = databaseConnectionEvents({
    log: {
      info: ((fields: Record<string, unknown>, message: string) => lines.push(['info', fields, message])) as never,
      warn: ((fields: Record<string, unknown>, message: string) => lines.push(['warn', fields, message])) as never,
    },
    metrics: { observeConnectionEvent: (event) => events.push(event) },
    unavailable: () => unavailable++,
  });
  return { handle, lines, events, unavailable: () => unavailable };
}

const error = new Error('boom');

describe('databaseConnectionEvents', () => {
  it('counts a refused host and nothing more: the next host may qualify (a standby in the list, TLS falling back)', () => {
    const { handle, lines, events, unavailable } = recorder();
    handle({ kind: 'refused', host: 'a:1', reason: 'read-only', error });
    handle({ kind: 'refused', host: 'a:1', reason: 'failed', error });
    handle({ kind: 'opened', host: 'b:2' });
    expect(events).toHaveLength(3);
    expect(unavailable()).toBe(0);
    expect(lines).toEqual([]);
  });

  it('makes readiness unavailable on a lost connection or no qualifying host, logging once per spell', () => {
    const { handle, lines, unavailable } = recorder();
    handle({ kind: 'discarded', host: 'a:1', error });
    handle({ kind: 'unavailable', error });
    handle({ kind: 'unavailable', error });
    expect(unavailable()).toBe(3);
    expect(lines.map(([level, , message]) => `${level} ${message.split(':')[0]}`)).toEqual([
      'warn database connection lost',
    ]);
    // A connection that qualifies ends the spell: the next failure is logged again.
    handle({ kind: 'opened', host: 'b:2' });
    handle({ kind: 'unavailable', error });
    expect(lines.map(([, , message]) => message.split(':')[0])).toEqual([
      'database connection lost',
      'database unavailable',
    ]);
  });

  it('names the primary at the first connection, and the new and previous ones at a failover', () => {
    const { handle, lines } = recorder();
    handle({ kind: 'primary', host: 'a:1', previous: undefined });
    handle({ kind: 'primary', host: 'b:2', previous: 'a:1' });
    expect(lines).toEqual([
      ['info', { primary: 'a:1' }, 'database primary is a:1'],
      ['warn', { primary: 'b:2', previous: 'a:1' }, 'database failover: the primary is now b:2 (was a:1)'],
    ]);
  });
});
