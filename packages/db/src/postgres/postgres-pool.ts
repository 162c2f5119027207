/**
 * A node-postgres pool that follows libpq's multi-host URLs: each new connection tries the URL's
 * hosts in order and keeps the first that qualifies (`target_session_attrs`), and a connection
 * whose host can no longer take writes (it became a standby, shut down, or the primary moved
 * elsewhere) is closed rather than handed out again. A one-host URL without
 * `target_session_attrs` gets a plain pg.Pool, as before.
 */
import pg from 'pg';
import { describeHost, type PostgresConnectionSettings, parsePostgresUrl } from './connection-url.js';
import { HOST_LOST_MESSAGE, isHostLost } from './host-lost.js';
import { type Target, TargetChooser } from './target-chooser.js';
import { failUnconfirmedCommits } from './unconfirmed-commits.js';

/** What happened to the pool's connections, for metrics and logs. `host` is `host:port`. */
export type ConnectionEvent =
  /** A new connection was opened (and, with target_session_attrs, qualified). */
  | { readonly kind: 'opened'; readonly host: string }
  /**
   * A host was tried for a new connection and failed (`failed`) or did not qualify; the next host
   * is tried (normal when a host is a standby, or while TLS falls back to plain text).
   */
  | { readonly kind: 'refused'; readonly host: string; readonly reason: RefusalReason; readonly error: unknown }
  /** A new connection found no host that qualifies: the database is unavailable for now. */
  | { readonly kind: 'unavailable'; readonly error: unknown }
  /** A pool connection was closed because its host can no longer serve it (or the primary moved). */
  | { readonly kind: 'discarded'; readonly host: string; readonly error: unknown }
  /** New connections qualify on another host than before (a failover); `previous` undefined at first. */
  | { readonly kind: 'primary'; readonly host: string; readonly previous: string | undefined };

export type RefusalReason = 'failed' | 'read-only' | 'standby';

export type PoolOptions = Omit<
  pg.PoolConfig,
  'connectionString' | 'host' | 'port' | 'ssl' | 'Client' | 'onConnect' | 'user' | 'password' | 'database'
>;

export interface PostgresPoolOptions {
  readonly onConnectionEvent?: ((event: ConnectionEvent) => void) | undefined;
  /** How long a host that failed comes after the others in the order (default 10 s). */
  readonly recheckMs?: number;
  /** After no host qualified: how long new connections fail at once, without trying (default 250 ms). */
  readonly noneRetryMs?: number;
}

/**
 * No host of the URL took a connection that qualified. Shaped as a server error with SQLSTATE
 * 08001 (sqlclient_unable_to_establish_sqlconnection), so that every layer above (Prisma's
 * adapter, translateError) reads it as "the database is unavailable".
 */
export class NoQualifyingHostError extends Error {
  override readonly name = 'NoQualifyingHostError';
  readonly code = '08001';
  readonly severity = 'FATAL';
  constructor(targetSessionAttrs: string, tried: readonly string[], options?: { cause?: unknown }) {
    super(`no database host accepted a ${targetSessionAttrs} session (tried ${tried.join(', ')})`, options);
  }
}

/** Opens a pool for `url` (libpq's form; see parsePostgresUrl) with `options` for pg.Pool. */
export function createPostgresPool(
  url: string | PostgresConnectionSettings,
  options: PoolOptions,
  { onConnectionEvent, recheckMs = 10_000, noneRetryMs = 250 }: PostgresPoolOptions = {},
): pg.Pool {
  const settings = typeof url === 'string' ? parsePostgresUrl(url) : url;
  const [only, ...others] = settings.hosts;
  const [ssl = false, ...fallbacks] = settings.sslAttempts;
  if (only !== undefined && others.length === 0 && fallbacks.length === 0 && settings.targetSessionAttrs === 'any') {
    return plainPool(settings, only, ssl, options, onConnectionEvent);
  }
  const chooser = new TargetChooser(settings, { recheckMs, noneRetryMs });
  return new FailoverPool(settings, chooser, options, onConnectionEvent ?? (() => {}));
}

/**
 * The URL's settings with the pool's options over them; the server `options` (`-c name=value`) of
 * both kept, the pool's last (they win where both set the same).
 */
function clientOptions(settings: PostgresConnectionSettings, options: PoolOptions): PoolOptions {
  const fromUrl = (settings.client as { options?: string }).options;
  const merged = [fromUrl, options.options].filter((part) => part !== undefined && part !== '').join(' ');
  return { ...settings.client, ...options, ...(merged === '' ? {} : { options: merged }) };
}

/** One host, any session: node-postgres's pool as it is; only its events are reported. */
function plainPool(
  settings: PostgresConnectionSettings,
  host: PostgresConnectionSettings['hosts'][number],
  ssl: PostgresConnectionSettings['sslAttempts'][number],
  options: PoolOptions,
  onEvent: PostgresPoolOptions['onConnectionEvent'],
): pg.Pool {
  const pool = new pg.Pool({ ...clientOptions(settings, options), host: host.host, port: host.port, ssl });
  pool.on('connect', (client) => failUnconfirmedCommits(client, describeHost(host)));
  if (onEvent) {
    const name = describeHost(host);
    pool.on('connect', () => onEvent({ kind: 'opened', host: name }));
    pool.on('error', (error) => onEvent({ kind: 'discarded', host: name, error }));
    pool.on('release', (error: unknown) => {
      if (error && isHostLost(error)) onEvent({ kind: 'discarded', host: name, error });
    });
  }
  return pool;
}

/** A pool client that knows where it went and whether its host was lost under it. */
type TargetClient = pg.PoolClient & { readonly target: Target; hostLost: boolean };

/** The statement a new connection's host is judged by (libpq's checks for read-write and primary). */
const SESSION_CHECK_SQL =
  "SELECT pg_catalog.pg_is_in_recovery() AS standby, pg_catalog.current_setting('transaction_read_only') = 'on' AS read_only";

class FailoverPool extends pg.Pool {
  /** Errors from connecting to a target: the next attempt tries another. */
  private readonly targetFailures = new WeakSet<object>();

  constructor(
    private readonly settings: PostgresConnectionSettings,
    private readonly chooser: TargetChooser,
    options: PoolOptions,
    private readonly onEvent: (event: ConnectionEvent) => void,
  ) {
    // The hooks run only once the pool exists; `this` cannot be named before super() returns.
    const self: { pool?: FailoverPool } = {};
    super({
      ...clientOptions(settings, options),
      // biome-ignore lint/suspicious/noExplicitAny: pg-pool calls `new Client(options)`; @types/pg types it without arguments.
      Client: targetClientClass(chooser, (target, error) => self.pool?.refused(target, 'failed', error)) as any,
      // Called by pg-pool with each new connection before it is handed out; a rejection closes it.
      onConnect: (client) => self.pool?.qualify(client as TargetClient),
    });
    self.pool = this;
    this.on('connect', (client) => failUnconfirmedCommits(client, hostOf(client)));
    this.on('error', (error, client) => this.onEvent({ kind: 'discarded', host: hostOf(client), error }));
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(
    callback: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void,
  ): void;
  override connect(
    callback?: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void,
  ): Promise<pg.PoolClient> | undefined {
    // Callbacks, not promises: pool.query (every statement) comes this way, and a promise chain
    // per checkout cost about 1.4 us of CPU per statement.
    if (!callback) {
      return new Promise((resolve, reject) =>
        this.connectQualified(0, 0, [], (error, client) => (client ? resolve(client) : reject(error))),
      );
    }
    this.connectQualified(0, 0, [], (error, client) =>
      client
        ? callback(undefined, client, (release) => client.release(release as Error | boolean | undefined))
        : callback(error, undefined, () => {}),
    );
    return undefined;
  }

  /**
   * Checks out a connection to a host that qualifies: each target at most once (a new connection
   * tries the next), and every connection the pool holds at most once if each turns out stale.
   */
  private connectQualified(
    attempts: number,
    stale: number,
    errors: unknown[],
    done: (error: Error | undefined, client?: TargetClient) => void,
  ): void {
    const { targets } = this.chooser;
    const exhausted = attempts >= targets.length || stale > (this.options.max ?? 10);
    if (exhausted || (this.idleCount === 0 && this.chooser.foundNoneRecently())) {
      const tried = targets.map((target) => target.name);
      const error = new NoQualifyingHostError(this.settings.targetSessionAttrs, tried, { cause: errors.at(-1) });
      if (errors.length > 0) {
        this.chooser.foundNone();
        this.onEvent({ kind: 'unavailable', error });
      }
      done(error);
      return;
    }
    super.connect((error, connected) => {
      if (error || !connected) {
        // Waiting too long for a pooled connection, or a pool that is closing: not a host's failure.
        if (!this.targetFailures.has(rootCause(error))) return done(error);
        errors.push(error);
        return this.connectQualified(attempts + 1, stale, errors, done);
      }
      const client = connected as TargetClient;
      if (client.hostLost || this.isStale(client)) {
        const why = client.hostLost ? HOST_LOST_MESSAGE : `the primary moved to ${this.chooser.current}`;
        this.discard(client, new Error(why));
        return this.connectQualified(attempts, stale + 1, errors, done);
      }
      this.guardRelease(client);
      done(undefined, client);
    });
  }

  /** A connection to a host other than the one new connections now qualify on (a previous primary). */
  private isStale(client: TargetClient): boolean {
    const { current } = this.chooser;
    return this.settings.targetSessionAttrs !== 'any' && current !== undefined && client.target.name !== current;
  }

  /** Release closes the connection when its host was lost under it, whatever the caller says. */
  private guardRelease(client: TargetClient): void {
    const release = client.release;
    client.release = (error?: Error | boolean) => {
      const lost = client.hostLost || (error !== undefined && error !== false && isHostLost(error));
      if (lost) this.onEvent({ kind: 'discarded', host: client.target.name, error });
      release(error || (client.hostLost ? new Error(HOST_LOST_MESSAGE) : undefined));
    };
  }

  private discard(client: TargetClient, error: Error): void {
    this.onEvent({ kind: 'discarded', host: client.target.name, error });
    client.release(error);
  }

  private async qualify(client: TargetClient): Promise<void> {
    const { target } = client;
    const wanted = this.settings.targetSessionAttrs;
    if (wanted !== 'any') {
      let refusal: 'read-only' | 'standby' | undefined;
      try {
        const { rows } = await client.query<{ standby: boolean; read_only: boolean }>(SESSION_CHECK_SQL);
        const [session] = rows;
        if (wanted === 'read-write' && session?.read_only !== false) refusal = 'read-only';
        if (wanted === 'primary' && session?.standby !== false) refusal = 'standby';
      } catch (error) {
        throw this.refused(target, 'failed', error);
      }
      if (refusal) throw this.refused(target, refusal, new Error(`${target.name} is ${refusal}`));
    }
    const { changed, previous } = this.chooser.qualified(target);
    this.onEvent({ kind: 'opened', host: target.name });
    if (changed && wanted !== 'any') this.onEvent({ kind: 'primary', host: target.name, previous });
  }

  /** Notes a target's failure (the next attempt tries another); returns the error to throw. */
  private refused(target: Target, reason: 'failed' | 'read-only' | 'standby', error: unknown): unknown {
    this.chooser.failed(target);
    if (typeof error === 'object' && error !== null) this.targetFailures.add(error);
    this.onEvent({ kind: 'refused', host: target.name, reason, error });
    return error;
  }
}

/** The Client class of one pool: each new client connects to the target its chooser picks. */
function targetClientClass(chooser: TargetChooser, onConnectFailed: (target: Target, error: unknown) => void) {
  return class TargetClientImpl extends pg.Client {
    readonly target: Target;
    hostLost = false;

    constructor(config: pg.ClientConfig) {
      const target = chooser.pick();
      // pg-pool keeps the password out of its options' enumerable keys: copy it by name.
      super({ ...config, password: config.password, host: target.host, port: target.port, ssl: target.ssl });
      this.target = target;
      this.connection.on('errorMessage', (message: { code?: string }) => {
        if (isHostLost(message)) this.hostLost = true;
      });
    }

    override connect(): Promise<pg.Client>;
    override connect(callback: (err: Error) => void): void;
    override connect(callback?: (err: Error) => void): Promise<pg.Client> | undefined {
      const connecting = super.connect().catch((error: unknown) => {
        onConnectFailed(this.target, error);
        throw error;
      });
      if (!callback) return connecting;
      connecting.then(
        () => (callback as (err: Error | null) => void)(null),
        (error: Error) => callback(error),
      );
      return undefined;
    }
  };
}

function hostOf(client: unknown): string {
  return (client as Partial<TargetClient> | undefined)?.target?.name ?? 'unknown';
}

/** pg-pool wraps a connection timeout's error: `cause` is the one the client saw. */
function rootCause(error: unknown): object {
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  return typeof cause === 'object' && cause !== null ? cause : (error as object);
}
