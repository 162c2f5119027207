import { createTestStorage, type TestStorage, testToken } from '@plant-store/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CONTENT_SECURITY_POLICY } from '../routes/console.js';
import { checkedFetch, failOnContractViolations } from '../test-support/checked-fetch.js';
import { expectError } from '../test-support/expect-error.js';
import { request, startTestService, type TestService } from '../test-support/test-service.js';

failOnContractViolations();

// The console's files over HTTP (the browser suites drive the page itself). No database work:
// PGlite is enough.
let storage: TestStorage;
let service: TestService;
beforeAll(async () => {
  storage = await createTestStorage('pglite', { migrated: true });
  service = await startTestService(storage);
});
afterAll(async () => {
  await service?.close();
  await storage?.dispose();
});

describe('GET /console', () => {
  it('answers the page without a token, with a strict Content-Security-Policy, one script, relative links only', async () => {
    const response = await request(service.url, '/console');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    const scripts = [...response.text.matchAll(/<script\b[^>]*>([^<]*)<\/script>/g)];
    expect(scripts.map(([tag]) => tag)).toEqual(['<script type="module" src="console/assets/console.js"></script>']);
    expect(response.text).not.toMatch(/\s(?:style|on[a-z]+)=/i);
    // Relative links only (right behind a proxy that adds a path prefix), none to another host.
    expect(response.text).not.toMatch(/(?:src|href)="(?:\/|[a-z]+:)/);
  });

  it.each([
    ['console.js', 'text/javascript; charset=utf-8'],
    ['console.css', 'text/css; charset=utf-8'],
  ])('serves /console/assets/%s as %s, under the same policy', async (file, type) => {
    const response = await request(service.url, `/console/assets/${file}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(type);
    expect(response.headers.get('content-security-policy')).toBe(CONSOLE_CONTENT_SECURITY_POLICY);
    expect(Number(response.headers.get('content-length'))).toBeGreaterThan(0);
  });

  it('loads nothing from another host: the script names no http(s) origin it could call', async () => {
    const { text } = await request(service.url, '/console/assets/console.js');
    const origins = [...text.matchAll(/https?:\/\/[a-z0-9.-]+/gi)].map(([origin]) => origin);
    // Only the placeholder of the receiver field, and the XML/SVG namespaces Preact knows.
    expect(new Set(origins)).toEqual(
      new Set(origins.filter((origin) => /^https?:\/\/(hooks\.example\.com|www\.w3\.org)$/.test(origin))),
    );
  });

  it.each(['/console/assets/nope.js', '/console/assets/index.html', '/console/assets/', '/console/index.html'])(
    'answers %s with 404 in the Error shape',
    async (path) => {
      expectError(await request(service.url, path), 404);
    },
  );

  it('redirects /console/ to /console', async () => {
    const response = await checkedFetch(new URL('/console/', service.url), { redirect: 'manual' });
    expect(response.status).toBe(301);
    expect(response.headers.get('location')).toBe('/console');
  });

  it("adds nothing to other routes' answers", async () => {
    const { token } = await service.db.issueToken(testToken({ name: 'reader', scopes: ['plants:read'] }));
    for (const path of ['/plants', '/healthz', '/version']) {
      const response = await request(service.url, path, { token });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-security-policy')).toBeNull();
      expect(response.headers.get('referrer-policy')).toBeNull();
    }
  });
});
