import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * After an answer sent before the request's body arrived: the most of the rest read and thrown
 * away, and the longest the connection stays open, while the client takes the answer in.
 */
export const LINGER_MAX_BYTES = 1024 * 1024;
export const LINGER_MAX_MS = 1_000;

/**
 * Whether the request has a body not all received yet. Node says a request without a body is
 * complete only once it has parsed past its headers, which can be after an app that answers at
 * once has answered: such a request has no body to wait for.
 */
export function bodyStillArriving(req: IncomingMessage): boolean {
  if (req.complete) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * For an answer given before the request's body has arrived (a refusal before or while reading
 * it: 401, 403, 413, 415, 429, a body that does not decode): unless the rest of the body was
 * already received, the connection closes after the answer instead of reading the rest (see
 * closeAfterAnswer). Waits for this turn's input to be parsed first: a small body sent with its
 * headers is usually there, and then the connection is kept.
 */
export async function closeAfterAnswerUnlessBodyArrived(req: IncomingMessage, res: ServerResponse): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  if (!req.complete) closeAfterAnswer(req, res);
}

/**
 * After an answer sent before the request's body arrived, the connection closes instead of
 * reading the rest. Node would otherwise read an unread body to its end to keep the connection
 * (any amount, for anyone, even unauthenticated). Closing at once is no better: a connection
 * closed with unread bytes is reset by the kernel, and a client still sending can lose the answer
 * before it reads it. So the answer says `Connection: close`; from then on, what the client still
 * sends is read and thrown away, up to LINGER_MAX_BYTES; once the answer is sent, the connection's
 * sending side is closed (the client sees the answer end), and the connection closes when the body
 * has ended, when the client closes, or after LINGER_MAX_MS, whichever comes first.
 *
 * Call before the answer's headers are sent.
 */
export function closeAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
  if (res.headersSent) return;
  res.setHeader('Connection', 'close');
  discardRestOfBody(req);
  const { socket } = req;
  // How Node ends a connection after an answer that says `Connection: close`, once it is sent:
  // its own ends the sending side and destroys the socket as soon as that is done.
  socket.destroySoon = () => linger(socket, req);
}

/**
 * Reads what is left of the body and drops it, up to LINGER_MAX_BYTES, then stops reading (the
 * client's sending stalls). Started with the answer, so that Node does not dump the body itself:
 * a dumped body is dropped by the parser, read to its end whatever its size.
 */
function discardRestOfBody(req: IncomingMessage): void {
  let discarded = 0;
  const discard = (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded <= LINGER_MAX_BYTES) return;
    req.off('data', discard);
    req.pause();
  };
  req.on('data', discard);
  req.resume();
}

/** Once the answer is sent: the sending side ends, and the connection closes within LINGER_MAX_MS. */
function linger(socket: Socket, req: IncomingMessage): void {
  socket.end();
  const timer = setTimeout(() => socket.destroy(), LINGER_MAX_MS);
  socket.once('close', () => clearTimeout(timer));
  // Nothing left unread: close as soon as the answer is out (a reset would not lose it then).
  const closeWhenSent = () => {
    if (socket.writableFinished) socket.destroy();
    else socket.once('finish', () => socket.destroy());
  };
  if (req.complete) closeWhenSent();
  else req.once('end', closeWhenSent);
}

/**
 * Ends a connection after a reply written to it directly (a request Node's parser refused), and
 * destroys it at the latest after LINGER_MAX_MS: a client that neither closes nor sends (further
 * bytes reach the failed parser, which refuses them, and the connection is destroyed then) must
 * not hold it.
 */
export function endWithin(socket: Duplex): void {
  socket.end();
  const timer = setTimeout(() => socket.destroy(), LINGER_MAX_MS);
  socket.once('close', () => clearTimeout(timer));
}
