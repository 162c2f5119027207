import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which webhook URLs the service accepts, and which addresses it will connect to.
 *
 * A webhook makes the service send requests wherever a client says: without a check, a client
 * could aim it at the service's own network (a database, a cloud metadata endpoint at
 * 169.254.169.254, an admin port on localhost). So only public addresses are allowed: ipaddr.js's
 * `unicast` range, an allowlist (a blocklist of private ranges always misses one: CGNAT, 6to4,
 * NAT64, IPv4-mapped IPv6...). Registration checks what the name resolves to now; delivery checks
 * again on every connection (safe-http.ts), since DNS can change in between.
 */

/** Resolves a host name to every address it has. */
export type ResolveHost = (host: string) => Promise<{ address: string }[]>;

export interface UrlPolicy {
  /** Accept every address (a test setup, or receivers on a private network by design). */
  readonly allowPrivateNetworks: boolean;
  /** Default: the system resolver (dns.lookup, every address, in its order). */
  readonly resolve?: ResolveHost;
}

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** The setting (config.ts) that lets receivers be on private, loopback and link-local addresses. */
export const ALLOW_PRIVATE_NETWORKS_SETTING = 'WEBHOOKS_ALLOW_PRIVATE_NETWORKS';

/** Why a receiver's host is refused, and the way to allow it (a receiver on your own network). */
const ONLY_PUBLIC = `webhooks are only sent to public addresses unless the service runs with ${ALLOW_PRIVATE_NETWORKS_SETTING}=true`;

/** How long registration waits for a name to resolve before calling it unresolvable. */
const RESOLVE_TIMEOUT_MS = 5000;

export const resolveWithSystem: ResolveHost = (host) => dns.promises.lookup(host, { all: true, verbatim: true });

export interface AddressCheck {
  readonly allowed: boolean;
  /** ipaddr.js's range name (`unicast`, `loopback`, `private`, ...), or `invalid`. */
  readonly range: string;
  /** The address to dial: IPv4-mapped IPv6 unwrapped to IPv4, zero-compressed IPv6. */
  readonly address: string;
}

/** Classifies an IP address (text, as DNS returns it or as a URL spells it, without brackets). */
export function checkAddress(ip: string, allowPrivateNetworks: boolean): AddressCheck {
  if (!ipaddr.isValid(ip)) return { allowed: false, range: 'invalid', address: ip };
  // process() turns ::ffff:127.0.0.1 into 127.0.0.1, whose range is then loopback, not ipv4Mapped.
  const parsed = ipaddr.process(ip);
  const named = parsed.range();
  const range = named === 'unicast' && isIpv4Compatible(parsed) ? 'ipv4Compatible' : named;
  return { allowed: allowPrivateNetworks || range === 'unicast', range, address: parsed.toString() };
}

/**
 * The deprecated IPv4-compatible form `::a.b.c.d` (RFC 4291 2.5.5.1), which no public host
 * uses (`::` and `::1` are in it too, but ipaddr.js names them). ipaddr.js calls the rest unicast
 * when written in hex (`::7f00:1`, as the URL parser writes `[::127.0.0.1]`), yet loopback when
 * written `::127.0.0.1`: refused in every spelling.
 */
function isIpv4Compatible(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  return (
    address.kind() === 'ipv6' &&
    address
      .toByteArray()
      .slice(0, 12)
      .every((byte) => byte === 0)
  );
}

/** Whether the service may connect to this address. */
export function isAllowedAddress(ip: string, allowPrivateNetworks: boolean): boolean {
  return checkAddress(ip, allowPrivateNetworks).allowed;
}

/** A URL's host without IPv6 brackets: what net.isIP and a resolver take. */
export function bareHostname(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Checks a URL a client wants events sent to. Returns null when acceptable, else a message for a
 * 400 answer. A fragment is refused rather than stripped: it never reaches the receiver, and the
 * URL is stored and shown back exactly as given.
 */
export async function checkWebhookUrl(url: string, policy: UrlPolicy): Promise<string | null> {
  // Characters are code points, as the schema and the OpenAPI document's maxLength count them.
  if (codePointCount(url) > MAX_WEBHOOK_URL_LENGTH) return `url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`;
  // The URL parser would quietly drop these; the stored URL would then differ from the one used.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
  if (/[\s\u0000-\u001f\u007f]/.test(url)) return 'url must not contain spaces or control characters';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'url must be an absolute http or https URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return `url must be an http or https URL, not ${parsed.protocol}`;
  }
  if (parsed.username !== '' || parsed.password !== '') return 'url must not contain a username or password';
  if (url.includes('#')) return 'url must not contain a fragment (#...)';
  const host = bareHostname(parsed);
  if (host === '') return 'url must name a host';

  let addresses: string[];
  if (net.isIP(host) !== 0) {
    addresses = [host];
  } else {
    const resolved = await resolveWithin(policy.resolve ?? resolveWithSystem, host, RESOLVE_TIMEOUT_MS);
    if (resolved === null || resolved.length === 0) return `url host ${host} does not resolve`;
    addresses = resolved.map(({ address }) => address);
  }
  for (const address of addresses) {
    const check = checkAddress(address, policy.allowPrivateNetworks);
    if (!check.allowed) {
      // A name's addresses are not told: the answer would let a client map the service's network.
      return net.isIP(host) !== 0
        ? `url host ${host} is not a public address (${check.range}); ${ONLY_PUBLIC}`
        : `url host ${host} resolves to an address that is not public; ${ONLY_PUBLIC}`;
    }
  }
  return null;
}

function codePointCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** The addresses, or null when the name does not resolve (or not in time). */
async function resolveWithin(
  resolve: ResolveHost,
  host: string,
  timeoutMs: number,
): Promise<{ address: string }[] | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((done) => {
    timer = setTimeout(() => done(null), timeoutMs);
  });
  try {
    return await Promise.race([resolve(host).catch(() => null), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
