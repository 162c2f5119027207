import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { AppContext } from '../http/app-state.js';
import { clientAddress, normalizeAddress } from './client-address.js';

function contextFrom(peer: string, forwardedFor?: string): AppContext {
  const req = {
    socket: { remoteAddress: peer },
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  } as unknown as IncomingMessage;
  return { req } as AppContext;
}

describe('normalizeAddress', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['::1', '::/64'],
    ['not an address', 'not an address'],
  ])('%s -> %s', (text, expected) => {
    expect(normalizeAddress(text)).toBe(expected);
  });
});

describe('clientAddress', () => {
  it('is the peer without trusted proxies, whatever X-Forwarded-For claims', () => {
    expect(clientAddress(contextFrom('10.1.2.3', '198.51.100.1'), 0)).toBe('10.1.2.3');
  });

  it('is the entry the nearest trusted proxy appended, never one the client wrote', () => {
    // The client wrote 1.1.1.1 itself; the load balancer appended the address it saw.
    expect(clientAddress(contextFrom('10.1.2.3', '1.1.1.1, 198.51.100.1'), 1)).toBe('198.51.100.1');
    expect(clientAddress(contextFrom('10.1.2.3', '1.1.1.1, 198.51.100.1, 10.9.9.9'), 2)).toBe('198.51.100.1');
    // Fewer entries than proxies: the peer.
    expect(clientAddress(contextFrom('10.1.2.3'), 1)).toBe('10.1.2.3');
  });
});
