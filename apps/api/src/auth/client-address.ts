import type { Socket } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { AppContext } from '../http/app-state.js';

/** A keep-alive connection's peer, worked out once per connection, not once per request. */
const peers = new WeakMap<Socket, string>();

/**
 * Who sent a request, as the failed-authentication limit counts it: the peer's address, or with
 * `trustedProxyHops` proxies in front (load balancers that append to X-Forwarded-For) the address
 * the nearest of them saw, `trustedProxyHops` entries from the end of X-Forwarded-For (entries
 * further left are whatever the client wrote). IPv4-mapped IPv6 is written as IPv4; an IPv6
 * address is reduced to its /64, the block one host or customer usually gets, so that a client
 * cannot step around the limit through the addresses of its own block.
 */
export function clientAddress(ctx: AppContext, trustedProxyHops: number): string {
  const { socket } = ctx.req;
  let peer = peers.get(socket);
  if (peer === undefined) {
    peer = normalizeAddress(socket.remoteAddress ?? 'unknown');
    peers.set(socket, peer);
  }
  if (trustedProxyHops === 0) return peer;
  const header = ctx.req.headers['x-forwarded-for'];
  const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const seen = forwarded.at(-trustedProxyHops);
  return seen === undefined ? peer : normalizeAddress(seen);
}

/** `1.2.3.4`, `2001:db8:1:2::/64`; text that is no address stays as it is (it is only a key). */
export function normalizeAddress(text: string): string {
  if (!ipaddr.isValid(text)) return text.slice(0, 64);
  const address = ipaddr.parse(text);
  if (address.kind() === 'ipv4') return address.toString();
  const ipv6 = address as ipaddr.IPv6;
  if (ipv6.isIPv4MappedAddress()) return ipv6.toIPv4Address().toString();
  const prefix = new ipaddr.IPv6([...ipv6.parts.slice(0, 4), 0, 0, 0, 0]);
  return `${prefix.toString()}/64`;
}
