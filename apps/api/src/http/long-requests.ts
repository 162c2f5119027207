import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

/** Connections whose request in flight may take longer to send than the server's request timeout. */
const exempt = new WeakSet<Duplex>();

/**
 * Lifts the server's request timeout (REQUEST_TIMEOUT_MS: the time to receive a whole request) for
 * this request: an import's body takes as long as its data does. Node reports the timeout as a
 * client error (see the server's answerClientError), which then leaves this connection open. Other
 * bounds still hold: the connection guard closes connections that send nothing, and shutdown ends
 * what is left after SHUTDOWN_TIMEOUT_MS.
 */
export function exemptFromRequestTimeout(req: IncomingMessage): void {
  const { socket } = req;
  exempt.add(socket);
  req.once('close', () => exempt.delete(socket));
}

/** Whether the connection carries a request exempt from the request timeout. */
export function isExemptFromRequestTimeout(socket: Duplex): boolean {
  return exempt.has(socket);
}
