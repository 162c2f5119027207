/** The setting that chose a listener's port: what a person changes when it cannot be had. */
export type PortVariable = 'PORT' | 'METRICS_PORT';

/**
 * A listener could not be opened for a reason its settings can fix: the port is taken
 * (EADDRINUSE), needs privileges (EACCES), or HOST is no address of this machine
 * (EADDRNOTAVAIL). Its message is the one line the service logs before it exits, naming the
 * variable to change; anything else stays a failure with its stack.
 */
export class PortUnavailableError extends Error {
  override readonly name = 'PortUnavailableError';

  constructor(
    readonly variable: PortVariable,
    readonly port: number,
    readonly host: string,
    readonly code: 'EADDRINUSE' | 'EACCES' | 'EADDRNOTAVAIL',
    options?: ErrorOptions,
  ) {
    super(portMessage(variable, port, host, code), options);
  }

  /** The error for `error` from listening on `port` of `host`, when a setting can fix it; else null. */
  static from(error: unknown, variable: PortVariable, port: number, host: string): PortUnavailableError | null {
    const code = (error as { code?: unknown } | null)?.code;
    if (code !== 'EADDRINUSE' && code !== 'EACCES' && code !== 'EADDRNOTAVAIL') return null;
    return new PortUnavailableError(variable, port, host, code, { cause: error });
  }
}

function portMessage(variable: PortVariable, port: number, host: string, code: PortUnavailableError['code']): string {
  const other = port === 65_535 ? port - 1 : port + 1;
  switch (code) {
    case 'EADDRINUSE':
      return `port ${port} on ${host} is already in use (another Plant Store, or another program): stop that, or choose another port with ${variable}, e.g. ${variable}=${other}`;
    case 'EACCES':
      return `not allowed to listen on port ${port} on ${host} (ports below 1024 need privileges): choose another port with ${variable}, e.g. ${variable}=${variable === 'PORT' ? 3000 : 9464}`;
    case 'EADDRNOTAVAIL':
      return `cannot listen on ${host} (${variable} ${port}): it is no address of this machine; set HOST to one that is, e.g. HOST=127.0.0.1`;
  }
}
