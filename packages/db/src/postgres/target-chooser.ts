import { describeHost, type PostgresConnectionSettings, type SslAttempt } from './connection-url.js';

/** One way to open a connection: a host of the URL, with or without TLS. */
export interface Target {
  readonly host: string | undefined;
  readonly port: number | undefined;
  /** `host:port`, as logs and metrics name it. */
  readonly name: string;
  readonly ssl: SslAttempt;
}

export interface TargetChooserOptions {
  /** How long a target that failed is tried only after the others (pgJDBC's hostRecheckSeconds). */
  readonly recheckMs: number;
  /** After a pass over every target found none that qualified: how long new connections fail at once. */
  readonly noneRetryMs: number;
  readonly now?: () => number;
}

/**
 * Which target a new connection tries: the URL's hosts in order (each with its TLS attempts), as
 * libpq does, except that a target that failed in the last `recheckMs` comes after the others. A
 * target that failed is not tried again for every connection of a burst (a host that is down, or
 * a standby, would cost each of them a round trip or a timeout); once its time is up it takes its
 * place in the order again.
 */
export class TargetChooser {
  readonly targets: readonly Target[];
  private readonly failedAt = new Map<Target, number>();
  private readonly now: () => number;
  private noneFoundAt = Number.NEGATIVE_INFINITY;
  private currentHost: string | undefined;

  constructor(
    settings: Pick<PostgresConnectionSettings, 'hosts' | 'sslAttempts'>,
    private readonly options: TargetChooserOptions,
  ) {
    this.targets = settings.hosts.flatMap((host) =>
      settings.sslAttempts.map((ssl) => ({ host: host.host, port: host.port, name: describeHost(host), ssl })),
    );
    this.now = options.now ?? (() => performance.now());
  }

  /** The host the last qualified connection went to (undefined before the first). */
  get current(): string | undefined {
    return this.currentHost;
  }

  /** The target for the next connection. */
  pick(): Target {
    const now = this.now();
    let oldestFailure: Target | undefined;
    for (const target of this.targets) {
      const failedAt = this.failedAt.get(target);
      if (failedAt === undefined || now - failedAt >= this.options.recheckMs) return target;
      if (oldestFailure === undefined || failedAt < (this.failedAt.get(oldestFailure) ?? 0)) oldestFailure = target;
    }
    // Every target failed a moment ago: the one that failed longest ago.
    return oldestFailure ?? (this.targets[0] as Target);
  }

  failed(target: Target): void {
    this.failedAt.set(target, this.now());
  }

  /** A connection to `target` qualified; returns the host it replaces as current, if it changed. */
  qualified(target: Target): { readonly changed: boolean; readonly previous: string | undefined } {
    this.failedAt.delete(target);
    this.noneFoundAt = Number.NEGATIVE_INFINITY;
    const previous = this.currentHost;
    this.currentHost = target.name;
    return { changed: previous !== target.name, previous };
  }

  /** A connection tried every target and none qualified. */
  foundNone(): void {
    this.noneFoundAt = this.now();
  }

  /** Whether a pass found no target in the last `noneRetryMs` (new connections then fail at once). */
  foundNoneRecently(): boolean {
    return this.now() - this.noneFoundAt < this.options.noneRetryMs;
  }
}
