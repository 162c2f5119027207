import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST a receiver got. */
export interface ReceivedWebhook {
  readonly receivedAt: number;
  readonly headers: Record<string, string>;
  /** The body as sent, decoded as UTF-8. */
  readonly body: string;
  /** The body's bytes exactly as sent. */
  readonly bytes: Buffer;
}

/**
 * How the receiver answers the Nth request (0-based): a status, a status after a delay (a slow
 * receiver), or 'hang' (never answers).
 */
export type ReceiverAnswer = number | { readonly status: number; readonly afterMs: number } | 'hang';

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>/hook` */
  readonly url: string;
  readonly received: ReceivedWebhook[];
  /** Answers from now on (the default: 200 to everything). */
  answer(decide: (request: ReceivedWebhook, index: number) => ReceiverAnswer): void;
  /** Resolves once `count` requests have arrived (or rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/** A real HTTP receiver on a loopback port, recording every request it gets. */
export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let decide: (request: ReceivedWebhook, index: number) => ReceiverAnswer = () => 200;
  const waiters: Array<() => void> = [];
  const hanging = new Set<ServerResponse>();

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === 'string') headers[name] = value;
      }
      const bytes = Buffer.concat(chunks);
      const entry = { receivedAt: performance.now(), headers, body: bytes.toString('utf8'), bytes };
      const index = received.push(entry) - 1;
      for (const wake of waiters.splice(0)) wake();
      const answer = decide(entry, index);
      if (answer === 'hang') {
        hanging.add(response);
        response.on('close', () => hanging.delete(response));
        return;
      }
      if (typeof answer === 'number') {
        response.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
        return;
      }
      setTimeout(() => response.writeHead(answer.status, { 'content-type': 'text/plain' }).end('ok'), answer.afterMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${bound}/hook`,
    received,
    answer(next) {
      decide = next;
    },
    async waitFor(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`receiver got ${received.length} of ${count} requests in ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 250));
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return received.slice(0, count);
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
