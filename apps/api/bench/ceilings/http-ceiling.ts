/**
 * The HTTP ceiling: a bare node:http server that reads each request body and answers a fixed
 * JSON body. Run as its own process, like the service, so it never shares a core's event loop
 * with the load generator.
 */
import { createServer } from 'node:http';
import { serveForBench } from './ceiling-protocol.js';

const BODY = Buffer.from('{"id":1,"name":"Bench plant 1","tag":"bench"}');

const server = createServer((request, response) => {
  request.on('data', () => {});
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': BODY.length });
    response.end(BODY);
  });
});

serveForBench(server);
