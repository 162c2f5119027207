import type { TestStorage } from '@plant-store/db/testing';
import { parseJson } from '@plant-store/schema';
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { type RunningServer, startServer } from '../server.js';
import { checkedFetch } from './checked-fetch.js';

export interface TestService extends RunningServer {
  /** Everything the service printed on stdout (the first-run token banner). */
  readonly printed: string[];
  /** Structured log lines it wrote (JSON, each ending in a newline), at the configured LOG_LEVEL. */
  readonly logs: string[];
}

/** The real service (config, database, migrations, Koa, a real port) on the given storage. */
export async function startTestService(storage: TestStorage, env: Record<string, string> = {}): Promise<TestService> {
  const printed: string[] = [];
  const logs: string[] = [];
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: storage.dataDir,
    ...(storage.databaseUrl ? { DATABASE_URL: storage.databaseUrl } : {}),
    SHUTDOWN_TIMEOUT_MS: '5000',
    // Longer than any pause between a test's requests: fetch reuses its idle connections, and one
    // the service closes as the next request goes out on it fails with ECONNRESET on a busy machine.
    KEEP_ALIVE_TIMEOUT_MS: '120000',
    ...env,
  });
  const server = await startServer(config, {
    log: createLogger({ level: config.logLevel, destination: { write: (line) => logs.push(line) } }),
    print: (text) => printed.push(text),
  });
  return Object.assign(server, { printed, logs });
}

export interface TestResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body parsed with the exact codec (ids as bigint). */
  readonly body: unknown;
}

export interface RequestOptions {
  readonly method?: string;
  readonly token?: string;
  readonly headers?: Record<string, string>;
  /** Sent as is; a non-string is encoded with JSON.stringify-free exactness by the caller. */
  readonly body?: string | Uint8Array;
  readonly contentType?: string | null;
}

export async function request(baseUrl: string, path: string, options: RequestOptions = {}): Promise<TestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined && options.contentType !== null) {
    headers['content-type'] = options.contentType ?? 'application/json';
  }
  const response = await checkedFetch(new URL(path, baseUrl), {
    method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
    headers,
    ...(options.body === undefined ? {} : { body: options.body }),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : parseJson(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}
