import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeHost, InvalidDatabaseUrlError, parsePostgresUrl } from './connection-url.js';

describe('parsePostgresUrl', () => {
  it('reads the multi-host URL pg_autoctl prints: each host in order, read-write, TLS then plain', () => {
    const settings = parsePostgresUrl(
      'postgres://127.0.0.1:6001,127.0.0.1:6002/plants?target_session_attrs=read-write&sslmode=prefer',
    );
    expect(settings.hosts).toEqual([
      { host: '127.0.0.1', port: 6001 },
      { host: '127.0.0.1', port: 6002 },
    ]);
    expect(settings.targetSessionAttrs).toBe('read-write');
    // libpq's prefer: TLS without verifying the certificate, else plain.
    expect(settings.sslAttempts).toEqual([{ rejectUnauthorized: false }, false]);
    expect(settings.client.database).toBe('plants');
    // Neither parameter reaches the server as a setting.
    expect(settings.client).not.toHaveProperty('target_session_attrs');
    expect(settings.client).not.toHaveProperty('sslmode', 'allow');
  });

  it('reads user, password, IPv6 hosts, default ports and other parameters as node-postgres does', () => {
    const settings = parsePostgresUrl(
      'postgresql://app:s%40cret@[::1]:5433,db.example,other:7000/plant%20store?application_name=plant-store&options=-c%20search_path%3Dapp',
    );
    expect(settings.hosts).toEqual([
      { host: '::1', port: 5433 },
      { host: 'db.example', port: undefined },
      { host: 'other', port: 7000 },
    ]);
    expect(settings.hosts.map(describeHost)).toEqual(['[::1]:5433', 'db.example:5432', 'other:7000']);
    expect(settings.client).toMatchObject({
      user: 'app',
      password: 's@cret',
      database: 'plant store',
      application_name: 'plant-store',
      options: '-c search_path=app',
    });
    expect(settings.targetSessionAttrs).toBe('any');
    expect(settings.sslAttempts).toEqual([false]);
  });

  it('keeps a one-host URL as node-postgres reads it', () => {
    const settings = parsePostgresUrl('postgres://postgres@127.0.0.1:5432/test');
    expect(settings.hosts).toEqual([{ host: '127.0.0.1', port: 5432 }]);
    expect(settings.targetSessionAttrs).toBe('any');
    expect(settings.sslAttempts).toEqual([false]);
    expect(settings.client).toMatchObject({ user: 'postgres', database: 'test' });
  });

  it('takes hosts and ports from the host and port parameters, as libpq does', () => {
    expect(parsePostgresUrl('postgres:///db?host=a,b&port=6001,6002').hosts).toEqual([
      { host: 'a', port: 6001 },
      { host: 'b', port: 6002 },
    ]);
    expect(parsePostgresUrl('postgres:///db?host=a,b&port=6001').hosts).toEqual([
      { host: 'a', port: 6001 },
      { host: 'b', port: 6001 },
    ]);
    expect(parsePostgresUrl('postgres:///db?host=/var/run/postgresql').hosts).toEqual([
      { host: '/var/run/postgresql', port: undefined },
    ]);
    expect(() => parsePostgresUrl('postgres:///db?host=a,b,c&port=1,2')).toThrow('names 3 hosts but 2 ports');
  });

  it.each([
    ['disable', [false]],
    ['allow', [false, { rejectUnauthorized: false }]],
    ['prefer', [{ rejectUnauthorized: false }, false]],
    // libpq's require encrypts without verifying (node-postgres alone would verify it fully).
    ['require', [{ rejectUnauthorized: false }]],
    ['no-verify', [{ rejectUnauthorized: false }]],
    ['verify-full', [{}]],
  ])('gives sslmode=%s libpq’s meaning', (mode, attempts) => {
    expect(parsePostgresUrl(`postgres://h/db?sslmode=${mode}`).sslAttempts).toEqual(attempts);
  });

  describe('with a root certificate', () => {
    let folder: string;
    let rootCert: string;
    beforeAll(async () => {
      folder = await mkdtemp(join(tmpdir(), 'plant-store-url-'));
      rootCert = join(folder, 'root.crt');
      await writeFile(rootCert, 'ROOT CERTIFICATE');
    });
    afterAll(() => rm(folder, { recursive: true, force: true }));

    it('verifies the chain but not the host name for verify-ca, and for require with a root certificate', () => {
      for (const mode of ['verify-ca', 'require']) {
        const [tls] = parsePostgresUrl(`postgres://h/db?sslmode=${mode}&sslrootcert=${rootCert}`).sslAttempts;
        expect(tls).toMatchObject({ ca: 'ROOT CERTIFICATE' });
        const options = tls === false ? undefined : tls;
        expect(options?.rejectUnauthorized).not.toBe(false);
        expect(typeof options?.checkServerIdentity).toBe('function');
      }
    });

    it('verifies chain and host name for verify-full', () => {
      const [tls] = parsePostgresUrl(`postgres://h/db?sslmode=verify-full&sslrootcert=${rootCert}`).sslAttempts;
      expect(tls).toEqual({ ca: 'ROOT CERTIFICATE' });
    });
  });

  it('reads sslrootcert=system as verify-full against the system’s CAs, and refuses it with weaker modes', () => {
    expect(parsePostgresUrl('postgres://h/db?sslrootcert=system').sslAttempts).toEqual([{}]);
    expect(() => parsePostgresUrl('postgres://h/db?sslrootcert=system&sslmode=require')).toThrow(
      'sslrootcert=system needs sslmode=verify-full',
    );
  });

  it.each([
    ['mysql://h/db', 'must be a postgres:// or postgresql:// URL'],
    ['postgres://h/db?target_session_attrs=standby', 'would connect to a standby, and this service writes'],
    ['postgres://h/db?target_session_attrs=prefer-standby', 'use read-write or primary'],
    ['postgres://h/db?target_session_attrs=writable', 'target_session_attrs must be any, read-write or primary'],
    ['postgres://h/db?sslmode=on', 'sslmode must be one of disable, allow, prefer, require, verify-ca, verify-full'],
    ['postgres://h:99999/db', 'has a port that is not from 1 to 65535'],
    ['postgres://a:1,[::1/db', 'has a host that cannot be read'],
    ['postgres://h/db?sslmode=verify-ca', 'verify-ca requires specifying a CA'],
  ])('refuses %s, saying why', (url, reason) => {
    expect(() => parsePostgresUrl(url)).toThrow(InvalidDatabaseUrlError);
    expect(() => parsePostgresUrl(url)).toThrow(reason);
  });

  it('never repeats the password in its errors', () => {
    try {
      parsePostgresUrl('postgres://app:hunter2@h1:1,h2:bad/db');
      expect.unreachable();
    } catch (error) {
      expect(String(error)).not.toContain('hunter2');
    }
  });
});
