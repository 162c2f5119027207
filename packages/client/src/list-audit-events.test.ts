import { afterEach, describe, expect, it } from 'vitest';
import { closeScriptedServers, errorAnswer, json, startScriptedServer } from './test-support/scripted-server.js';
import { caught, createTestClient } from './test-support/test-client.js';

afterEach(closeScriptedServers);

/** An event as the service writes it, its id exact (past 2^53 here). */
function eventText(id: bigint, action = 'token.issued'): string {
  return (
    `{"id":${id},"occurredAt":"2026-11-27T10:00:00.000Z","team":"inventory",` +
    `"actor":{"kind":"token","name":"inventory-admin","team":"inventory"},"action":"${action}",` +
    `"target":"ci","clientAddress":"203.0.113.7","details":{"scopes":["plants:read"]}}`
  );
}

const FIRST = 2n ** 53n + 1n;

describe('listAuditEvents and auditEvents', () => {
  it('reads a page with ids exact, and the next page from its Link', async () => {
    const server = await startScriptedServer([
      json(200, `[${eventText(FIRST)},${eventText(FIRST + 1n, 'token.revoked')}]`, {
        Link: `<?limit=2&after=${FIRST + 1n}>; rel="next"`,
      }),
    ]);
    const page = await createTestClient(server.url).listAuditEvents({ limit: 2 });
    expect(page.events.map((event) => [event.id, event.action])).toEqual([
      [FIRST, 'token.issued'],
      [FIRST + 1n, 'token.revoked'],
    ]);
    expect(page.events[0]).toMatchObject({
      actor: { kind: 'token', name: 'inventory-admin', team: 'inventory' },
      clientAddress: '203.0.113.7',
      details: { scopes: ['plants:read'] },
    });
    expect(page.next).toEqual({ limit: 2, after: FIRST + 1n });
    expect(server.requests.map(({ method, url }) => `${method} ${url}`)).toEqual(['GET /audit-events?limit=2']);
  });

  it('walks every page, and refuses a page whose ids do not ascend', async () => {
    const server = await startScriptedServer([
      json(200, `[${eventText(1n)}]`, { Link: '<?limit=1&after=1>; rel="next"' }),
      json(200, `[${eventText(2n)}]`),
    ]);
    const seen = [];
    for await (const event of createTestClient(server.url).auditEvents({ pageSize: 1 })) seen.push(event.id);
    expect(seen).toEqual([1n, 2n]);
    expect(server.requests.map(({ url }) => url)).toEqual(['/audit-events?limit=1', '/audit-events?limit=1&after=1']);

    const backwards = await startScriptedServer([json(200, `[${eventText(5n)},${eventText(4n)}]`)]);
    expect(await caught(createTestClient(backwards.url).listAuditEvents())).toMatchObject({
      kind: 'invalid-response',
    });
  });

  it('throws the 403 of a token without tokens:manage', async () => {
    const server = await startScriptedServer([errorAnswer(403, 403, 'this token lacks the tokens:manage scope')]);
    expect(await caught(createTestClient(server.url).listAuditEvents())).toMatchObject({ status: 403, error: 403 });
  });
});
