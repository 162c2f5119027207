import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import { createTestStorage, type TestStorage, testEngines, testToken } from '@plant-store/db/testing';
import { SCOPES } from '@plant-store/schema';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { AppState } from '../http/app-state.js';
import { failOnContractViolations } from '../test-support/checked-fetch.js';
import { request, startTestService, type TestService } from '../test-support/test-service.js';
import { routeRequests } from './static-routes.js';

failOnContractViolations();

// The routes without parameters answer from routeRequests' table; everything else from the router.
describe.each(testEngines())('routes without parameters, looked up by method and path, on %s', (engine) => {
  let storage: TestStorage;
  let service: TestService;
  let token: string;

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    service = await startTestService(storage);
    token = (await service.db.issueToken(testToken({ name: 'routes', scopes: SCOPES }))).token;
  });
  afterAll(async () => {
    await service?.close();
    await storage?.dispose();
  });

  const accessLine = (requestId: string) =>
    service.logs
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => line.requestId === requestId);

  it.each([
    ['GET', '/plants?limit=1', '/plants', 200],
    ['POST', '/plants', '/plants', 400],
    ['GET', '/events', '/events', 200],
    ['GET', '/tokens', '/tokens', 200],
    ['GET', '/healthz', '/healthz', 200],
    ['HEAD', '/plants', '/plants', 200],
    ['GET', '/plants/1', '/plants/:id', 404],
    ['PUT', '/plants', 'unmatched', 405],
    ['GET', '/plants/', 'unmatched', 404],
    ['GET', '/PLANTS', 'unmatched', 404],
  ])('%s %s: route %s in the access line, status %d', async (method, path, route, status) => {
    const requestId = `route-${method}-${path.replaceAll(/[^A-Za-z0-9]/g, '.')}`;
    const headers = { 'X-Request-Id': requestId, authorization: `Bearer ${token}` };
    // HEAD and the trailing slash are no operations of the contract: sent unchecked.
    const response =
      method === 'HEAD' || path.endsWith('/')
        ? await fetch(`${service.url}${path}`, { method, headers })
        : await request(service.url, path, {
            method,
            headers,
            ...(method === 'POST' ? { body: '{"id": 1, "name": ""}' } : {}),
          });
    await ('arrayBuffer' in response ? response.arrayBuffer() : undefined);
    expect(response.status).toBe(status);
    expect(accessLine(requestId)).toMatchObject({ method, route, status });
    if (status === 405) expect(response.headers.get('allow')).toContain('GET');
  });
});

/** `app` on a free loopback port until the test ends; its base URL. */
async function serve(app: Koa<AppState>): Promise<string> {
  const server = app.listen(0, '127.0.0.1');
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  await new Promise((resolve) => server.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('routeRequests on a router with middleware of its own', () => {
  it('answers from its table a path with routes of several methods (GET and POST /plants), without the router', async () => {
    const router = new Router<AppState>();
    router.get('/both', (ctx) => {
      ctx.body = `get ${ctx._matchedRoute}`;
    });
    router.post('/both', (ctx) => {
      ctx.body = `post ${ctx._matchedRoute}`;
    });
    router.get('/both/:id', (ctx) => {
      ctx.body = `one ${ctx.params.id}`;
    });
    const app = new Koa<AppState>();
    app.use(routeRequests(router));
    // From here, every request the router routes itself asks it for a match.
    let matches = 0;
    const match = router.match.bind(router);
    router.match = (path, method) => {
      matches += 1;
      return match(path, method);
    };
    const base = await serve(app);
    const get = await fetch(`${base}/both`);
    const post = await fetch(`${base}/both`, { method: 'POST' });
    expect([await get.text(), await post.text()]).toEqual(['get /both', 'post /both']);
    expect(matches).toBe(0);
    // A route with parameters goes through the router.
    expect(await (await fetch(`${base}/both/7`)).text()).toBe('one 7');
    expect(matches).toBe(1);
  });

  it('leaves to the router a path that router.use middleware also matches: the middleware runs', async () => {
    const router = new Router<AppState>();
    router.use('/guarded', async (ctx, next) => {
      ctx.set('x-guard', 'ran');
      await next();
    });
    router.get('/guarded', (ctx) => {
      ctx.body = 'guarded';
    });
    router.get('/plain', (ctx) => {
      ctx.body = 'plain';
    });
    const app = new Koa<AppState>();
    app.use(routeRequests(router));
    const base = await serve(app);
    const guarded = await fetch(`${base}/guarded`);
    expect([guarded.status, guarded.headers.get('x-guard'), await guarded.text()]).toEqual([200, 'ran', 'guarded']);
    const plain = await fetch(`${base}/plain`);
    expect([plain.status, plain.headers.get('x-guard'), await plain.text()]).toEqual([200, null, 'plain']);
  });
});
