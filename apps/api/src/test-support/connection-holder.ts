/**
 * A hostile client, in a process of its own (so that its work does not slow the test's probes):
 * holds COUNT connections to 127.0.0.1:PORT from LOCAL_ADDRESS, half of them silent and half with
 * half a request line sent, and opens a new one of the same kind whenever the server closes one.
 * Prints a JSON line every 250 ms: `{"open":...,"opened":...,"closedByServer":...}` (open: connected
 * now; opened: connections made so far; closedByServer: closes it did not ask for).
 *
 * Usage: node --import tsx src/test-support/connection-holder.ts PORT COUNT LOCAL_ADDRESS
 */
import { connect } from 'node:net';

const [port, count, localAddress] = process.argv.slice(2);
if (port === undefined || count === undefined || localAddress === undefined) {
  process.stderr.write('usage: connection-holder.ts PORT COUNT LOCAL_ADDRESS\n');
  process.exit(2);
}

let open = 0;
let opened = 0;
let closedByServer = 0;

function hold(halfSent: boolean): void {
  const socket = connect({ port: Number(port), host: '127.0.0.1', localAddress });
  let connected = false;
  socket.on('error', () => {});
  socket.once('connect', () => {
    connected = true;
    open++;
    opened++;
    if (halfSent) socket.write('GET /healthz HTTP/1.1\r\nHost: pro');
  });
  socket.once('close', () => {
    if (connected) {
      open--;
      closedByServer++;
    }
    hold(halfSent);
  });
}

for (let index = 0; index < Number(count); index++) hold(index % 2 === 1);

setInterval(() => {
  process.stdout.write(`${JSON.stringify({ open, opened, closedByServer })}\n`);
}, 250);
