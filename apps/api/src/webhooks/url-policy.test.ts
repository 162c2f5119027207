import { describe, expect, it } from 'vitest';
import { checkAddress, checkWebhookUrl, isAllowedAddress, type ResolveHost } from './url-policy.js';

/** A resolver that knows a few names, and fails for the rest as the system one does. */
function fakeDns(names: Record<string, string[]>): ResolveHost & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (host: string) => {
    asked.push(host);
    const addresses = names[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address }));
  };
  return Object.assign(resolve, { asked });
}

const dns = fakeDns({
  'public.example': ['93.184.215.14', '2606:4700::1111'],
  'rebind.example': ['127.0.0.1'],
  'mixed.example': ['93.184.215.14', '10.1.2.3'],
  'empty.example': [],
});
const publicOnly = { allowPrivateNetworks: false, resolve: dns };
const anything = { allowPrivateNetworks: true, resolve: dns };

describe('checkWebhookUrl', () => {
  it('accepts public addresses, literal or resolved', async () => {
    for (const url of [
      'http://93.184.215.14/',
      'https://93.184.215.14:8443/hooks?plant=1',
      'https://[2606:4700::1111]/',
      'https://public.example/webhooks/plants',
    ]) {
      expect(await checkWebhookUrl(url, publicOnly), url).toBeNull();
    }
  });

  it.each([
    ['http://127.0.0.1:8080/', 'url host 127.0.0.1 is not a public address (loopback)'],
    ['http://[::1]/', 'url host ::1 is not a public address (loopback)'],
    // An IPv4-mapped IPv6 address is judged as the IPv4 address it is.
    ['http://[::ffff:127.0.0.1]/', 'url host ::ffff:7f00:1 is not a public address (loopback)'],
    ['http://10.0.0.1/', '(private)'],
    ['http://192.168.1.1/', '(private)'],
    ['http://169.254.169.254/latest/meta-data/', '(linkLocal)'],
    ['http://[fd00::1]/', '(uniqueLocal)'],
    ['http://[fe80::1]/', '(linkLocal)'],
    ['http://0.0.0.0/', '(unspecified)'],
    ['http://[::]/', '(unspecified)'],
    ['http://100.64.0.1/', '(carrierGradeNat)'],
    ['http://224.0.0.1/', '(multicast)'],
    ['http://255.255.255.255/', '(broadcast)'],
    ['http://192.0.2.1/', '(reserved)'],
    ['http://[2002:7f00:1::]/', '(6to4)'],
    // IPv4-compatible (deprecated), in both spellings: the URL parser writes the dotted one in hex.
    ['http://[::127.0.0.1]/', 'url host ::7f00:1 is not a public address (ipv4Compatible)'],
    ['http://[::7f00:1]/', '(ipv4Compatible)'],
    ['http://[::808:808]/', '(ipv4Compatible)'],
    // The URL parser reads 0x7f.1 as 127.0.0.1 (as browsers and curl do).
    ['http://0x7f.1/', 'url host 127.0.0.1 is not a public address (loopback)'],
    ['http://2130706433/', 'url host 127.0.0.1 is not a public address (loopback)'],
  ])('refuses %s', async (url, message) => {
    const refusal = await checkWebhookUrl(url, publicOnly);
    expect(refusal).toContain(message);
    expect(refusal).toContain(
      'webhooks are only sent to public addresses unless the service runs with WEBHOOKS_ALLOW_PRIVATE_NETWORKS=true',
    );
  });

  it('refuses a name when any of its addresses is not public, without telling the addresses', async () => {
    const rebind = await checkWebhookUrl('https://rebind.example/', publicOnly);
    expect(rebind).toBe(
      'url host rebind.example resolves to an address that is not public; webhooks are only sent to public addresses unless the service runs with WEBHOOKS_ALLOW_PRIVATE_NETWORKS=true',
    );
    const mixed = await checkWebhookUrl('https://mixed.example/', publicOnly);
    expect(mixed).toContain('url host mixed.example resolves to an address that is not public');
    expect(mixed).not.toContain('10.1.2.3');
    expect(mixed).not.toContain('private');
  });

  it('refuses a name that does not resolve', async () => {
    expect(await checkWebhookUrl('https://nowhere.example/', publicOnly)).toBe(
      'url host nowhere.example does not resolve',
    );
    expect(await checkWebhookUrl('https://empty.example/', publicOnly)).toBe('url host empty.example does not resolve');
    expect(await checkWebhookUrl('https://nowhere.example/', anything)).toBe(
      'url host nowhere.example does not resolve',
    );
  });

  it('accepts private and loopback addresses when private networks are allowed', async () => {
    for (const url of ['http://127.0.0.1:8080/hook', 'http://[::1]/', 'http://10.0.0.1/', 'https://rebind.example/']) {
      expect(await checkWebhookUrl(url, anything), url).toBeNull();
    }
  });

  it('refuses what is not an absolute http(s) URL', async () => {
    const cases: Array<[string, string]> = [
      ['ftp://93.184.215.14/', 'url must be an http or https URL, not ftp:'],
      ['file:///etc/passwd', 'url must be an http or https URL, not file:'],
      ['javascript:alert(1)', 'url must be an http or https URL, not javascript:'],
      ['/webhooks', 'url must be an absolute http or https URL'],
      ['93.184.215.14/hook', 'url must be an absolute http or https URL'],
      ['', 'url must be an absolute http or https URL'],
      ['http://', 'url must be an absolute http or https URL'],
      ['http://user:pass@93.184.215.14/', 'url must not contain a username or password'],
      ['http://user@93.184.215.14/', 'url must not contain a username or password'],
      ['http://93.184.215.14/hook#part', 'url must not contain a fragment (#...)'],
      ['http://93.184.215.14/hook#', 'url must not contain a fragment (#...)'],
      [' http://93.184.215.14/', 'url must not contain spaces or control characters'],
      ['http://93.184.215.14/a\tb', 'url must not contain spaces or control characters'],
      [`http://93.184.215.14/${'a'.repeat(2048)}`, 'url must be at most 2048 characters'],
    ];
    for (const [url, message] of cases) expect(await checkWebhookUrl(url, anything), url).toBe(message);
    const longest = `http://93.184.215.14/${'a'.repeat(2048 - 'http://93.184.215.14/'.length)}`;
    expect(longest).toHaveLength(2048);
    expect(await checkWebhookUrl(longest, publicOnly)).toBeNull();
    // Characters are code points, as the schema and the OpenAPI maxLength count them: 2048 of them
    // pass even when astral ones make the string longer in UTF-16 units.
    const astral = `http://93.184.215.14/${'\u{1F331}'.repeat(2048 - 'http://93.184.215.14/'.length)}`;
    expect(astral.length).toBeGreaterThan(2048);
    expect(await checkWebhookUrl(astral, publicOnly)).toBeNull();
    expect(await checkWebhookUrl(`${astral}a`, publicOnly)).toBe('url must be at most 2048 characters');
  });

  it('does not ask the resolver about literal addresses', async () => {
    const counting = fakeDns({});
    await checkWebhookUrl('http://93.184.215.14/', { allowPrivateNetworks: false, resolve: counting });
    await checkWebhookUrl('http://[2606:4700::1111]/', { allowPrivateNetworks: false, resolve: counting });
    expect(counting.asked).toEqual([]);
    await checkWebhookUrl('http://public.example:8080/', { allowPrivateNetworks: false, resolve: counting });
    expect(counting.asked).toEqual(['public.example']);
  });
});

describe('checkAddress and isAllowedAddress', () => {
  it('allows only unicast, unless private networks are allowed', () => {
    expect(isAllowedAddress('93.184.215.14', false)).toBe(true);
    expect(isAllowedAddress('2606:4700::1111', false)).toBe(true);
    for (const address of [
      '127.0.0.1',
      '::1',
      '::ffff:127.0.0.1',
      '10.0.0.1',
      '169.254.169.254',
      'fd00::1',
      '64:ff9b::a00:1',
    ]) {
      expect(isAllowedAddress(address, false), address).toBe(false);
      expect(isAllowedAddress(address, true), address).toBe(true);
    }
    expect(isAllowedAddress('not an address', true)).toBe(false);
  });

  it('unwraps IPv4-mapped IPv6 addresses to the IPv4 address to dial', () => {
    expect(checkAddress('::ffff:93.184.215.14', false)).toEqual({
      allowed: true,
      range: 'unicast',
      address: '93.184.215.14',
    });
    expect(checkAddress('::ffff:7f00:1', false)).toEqual({ allowed: false, range: 'loopback', address: '127.0.0.1' });
  });
});
