/**
 * The flood of the bogus-token scenario, in a process of its own (so that it does not slow the
 * bench's own measuring): `GET /plants/1` with a new, well-formed, made-up bearer token on every
 * request (`pst_` and 43 random base64url characters, as real ones look), at a fixed rate over a
 * few keep-alive connections from 127.0.0.1, for a fixed time. Prints one JSON line: what it sent
 * and what came back.
 *
 * Usage: node --import tsx bench/flood/bogus-token-flood.ts URL RATE SECONDS CONNECTIONS
 */
import { randomBytes } from 'node:crypto';
import { measureHttp } from '../http-load.js';

const [url, rate, seconds, connections] = process.argv.slice(2);
if (url === undefined || rate === undefined || seconds === undefined || connections === undefined) {
  process.stderr.write('usage: bogus-token-flood.ts URL RATE SECONDS CONNECTIONS\n');
  process.exit(2);
}

const measurement = await measureHttp(
  {
    url,
    token: undefined,
    nextRequest: () => ({
      method: 'GET',
      path: '/plants/1',
      headers: { authorization: `Bearer pst_${randomBytes(32).toString('base64url')}` },
    }),
    expectedStatus: 429,
  },
  Number(connections),
  { seconds: Number(seconds) },
  Number(rate),
);
process.stdout.write(`${JSON.stringify(measurement)}\n`);
