/**
 * libpq's connection URLs for node-postgres, which reads only one host: the multi-host form that
 * high-availability tools print (`pg_autoctl show uri`:
 * `postgres://host1:6001,host2:6002/db?target_session_attrs=read-write&sslmode=prefer`),
 * `target_session_attrs`, and every `sslmode` with libpq's meaning (node-postgres alone reads
 * `prefer`, `require` and `verify-ca` as `verify-full`). Everything else in the URL (user, password,
 * database, `application_name`, `options`, certificates...) is read by pg-connection-string as
 * node-postgres itself reads it.
 */
import type { ConnectionOptions } from 'node:tls';
import type pg from 'pg';
import { parse, toClientConfig } from 'pg-connection-string';

/** What a new connection must find on its host to be kept (libpq's `target_session_attrs`). */
export type TargetSessionAttrs = 'any' | 'read-write' | 'primary';

export interface PostgresHost {
  /** Undefined: node-postgres's default (PGHOST, else localhost). */
  readonly host: string | undefined;
  /** Undefined: node-postgres's default (PGPORT, else 5432). */
  readonly port: number | undefined;
}

/** A TLS attempt: `false` is a plain connection. */
export type SslAttempt = false | ConnectionOptions;

export interface PostgresConnectionSettings {
  /** The hosts, in the URL's order. */
  readonly hosts: readonly PostgresHost[];
  readonly targetSessionAttrs: TargetSessionAttrs;
  /**
   * What to try on each host, in order: one attempt, or two for `sslmode=prefer` (TLS, then plain)
   * and `allow` (plain, then TLS).
   */
  readonly sslAttempts: readonly SslAttempt[];
  /** Everything else for node-postgres (user, password, database, ...): no host, port or ssl. */
  readonly client: Readonly<pg.ClientConfig>;
}

/** A connection URL that cannot be used; the message never repeats the URL (it may hold a password). */
export class InvalidDatabaseUrlError extends Error {
  override readonly name = 'InvalidDatabaseUrlError';
}

const SCHEME_AND_AUTHORITY = /^(postgres(?:ql)?:\/\/)([^/?#]*)(.*)$/s;
const HOST_AND_PORT = /^(?:\[([^\]]*)\]|([^:[\]]*))(?::(\d*))?$/;
const SSL_MODES = new Set(['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full']);
const WRITABLE_TARGETS: ReadonlySet<string> = new Set<TargetSessionAttrs>(['any', 'read-write', 'primary']);
/** libpq's other values: sessions this service, which writes, cannot use. */
const READ_ONLY_TARGETS = new Set(['read-only', 'standby', 'prefer-standby']);
/** Our parameters: pg-connection-string would pass them on to the server as settings. */
const OWN_PARAMETERS = ['target_session_attrs', 'uselibpqcompat'];

/** Reads a `postgres://` or `postgresql://` URL, libpq's multi-host form included. */
export function parsePostgresUrl(url: string): PostgresConnectionSettings {
  const match = SCHEME_AND_AUTHORITY.exec(url);
  if (!match) throw new InvalidDatabaseUrlError('must be a postgres:// or postgresql:// URL');
  const [, scheme = '', authority = '', rest = ''] = match;
  const at = authority.lastIndexOf('@');
  const userInfo = at === -1 ? '' : authority.slice(0, at + 1);
  const hostList = authority.slice(at + 1);
  const queryStart = rest.indexOf('?');
  const path = queryStart === -1 ? rest : rest.slice(0, queryStart);
  const query = new URLSearchParams(queryStart === -1 ? '' : rest.slice(queryStart + 1).replace(/#.*$/s, ''));

  const targetSessionAttrs = readTargetSessionAttrs(query.get('target_session_attrs'));
  const sslMode = readSslMode(query);
  for (const name of OWN_PARAMETERS) query.delete(name);
  if (sslMode !== undefined) query.set('sslmode', sslMode === 'allow' ? 'prefer' : sslMode);

  const hosts = readHosts(hostList, query);
  query.delete('host');
  query.delete('port');
  // pg-connection-string reads one host: give it the first (it is replaced per connection anyway).
  const [first] = hostList.split(',');
  const search = query.toString();
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(`${scheme}${userInfo}${first ?? ''}${path}${search === '' ? '' : `?${search}`}`, {
      useLibpqCompat: true,
    });
  } catch (error) {
    // Its messages name the parameter or file at fault, never the URL.
    throw new InvalidDatabaseUrlError(error instanceof Error ? error.message : String(error), { cause: error });
  }
  const { host: _host, port: _port, ssl, ...client } = toClientConfig(parsed);
  return { hosts, targetSessionAttrs, sslAttempts: sslAttempts(sslMode, ssl), client };
}

/** `host:port` as the URL names it (for logs, metrics and messages; never a credential). */
export function describeHost({ host, port }: PostgresHost): string {
  const name = host ?? 'localhost';
  return `${name.includes(':') ? `[${name}]` : name}:${port ?? 5432}`;
}

function readTargetSessionAttrs(value: string | null): TargetSessionAttrs {
  if (value === null || WRITABLE_TARGETS.has(value)) return (value ?? 'any') as TargetSessionAttrs;
  if (READ_ONLY_TARGETS.has(value)) {
    throw new InvalidDatabaseUrlError(
      `target_session_attrs=${value} would connect to a standby, and this service writes: use read-write or primary`,
    );
  }
  throw new InvalidDatabaseUrlError(`target_session_attrs must be any, read-write or primary, not "${value}"`);
}

/** The URL's sslmode (`no-verify`, node-postgres's own name, is libpq's `require`), or undefined. */
function readSslMode(query: URLSearchParams): string | undefined {
  const given = query.get('sslmode');
  const mode = given === 'no-verify' ? 'require' : given;
  if (query.get('sslrootcert') === 'system') {
    // libpq 16: the system's CAs, and nothing weaker than verify-full. Node verifies against its own
    // CA store (and NODE_EXTRA_CA_CERTS) when no `ca` is given.
    query.delete('sslrootcert');
    if (mode !== null && mode !== 'verify-full') {
      throw new InvalidDatabaseUrlError(`sslrootcert=system needs sslmode=verify-full, not ${mode}`);
    }
    return 'verify-full';
  }
  if (mode === null) return undefined;
  if (!SSL_MODES.has(mode)) {
    throw new InvalidDatabaseUrlError(`sslmode must be one of ${[...SSL_MODES].join(', ')}, not "${mode}"`);
  }
  return mode;
}

function sslAttempts(mode: string | undefined, ssl: pg.ClientConfig['ssl']): SslAttempt[] {
  // Without sslmode node-postgres connects in plain text, as this service always has (libpq's own
  // default, `prefer`, is one parameter away).
  const tls: SslAttempt = typeof ssl === 'object' ? ssl : ssl === true ? {} : false;
  if (mode === 'prefer') return [tls, false];
  if (mode === 'allow') return [false, tls];
  return [tls];
}

/**
 * The hosts of the authority (`h1:p1,h2:p2`), or of the `host` and `port` parameters, which win
 * as they do in libpq (one port for every host, or one each).
 */
function readHosts(hostList: string, query: URLSearchParams): PostgresHost[] {
  const hostParam = query.get('host');
  const portParam = query.get('port');
  let hosts: PostgresHost[] = hostList.split(',').map(readHost);
  if (hostParam !== null) hosts = hostParam.split(',').map((host) => ({ host: host || undefined, port: undefined }));
  if (portParam !== null) {
    const ports = portParam.split(',').map(readPort);
    if (ports.length !== 1 && ports.length !== hosts.length) {
      throw new InvalidDatabaseUrlError(`names ${hosts.length} hosts but ${ports.length} ports`);
    }
    hosts = hosts.map((host, index) => ({ host: host.host, port: ports.length === 1 ? ports[0] : ports[index] }));
  }
  return hosts;
}

function readHost(text: string): PostgresHost {
  const match = HOST_AND_PORT.exec(text);
  if (!match) throw new InvalidDatabaseUrlError(`has a host that cannot be read: "${text}"`);
  const [, bracketed, plain, port] = match;
  const host = decodeURIComponent(bracketed ?? plain ?? '');
  return { host: host === '' ? undefined : host, port: readPort(port ?? '') };
}

function readPort(text: string): number | undefined {
  if (text === '') return undefined;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new InvalidDatabaseUrlError(`has a port that is not from 1 to 65535: "${text}"`);
  }
  return port;
}
