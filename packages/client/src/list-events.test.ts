import { afterEach, describe, expect, it } from 'vitest';
import { closeScriptedServers, errorAnswer, json, startScriptedServer } from './test-support/scripted-server.js';
import { caught, createTestClient } from './test-support/test-client.js';

afterEach(closeScriptedServers);

/** An event as the service writes it, the plant's id exact (past 2^53). */
function eventText(cursor: string, type = 'plant.created', id = 2n ** 53n + 1n): string {
  return (
    `{"cursor":"${cursor}","eventId":"msg_0b8f7f9e-4f0c-4a57-9c59-6d8e3f1f2a10","type":"${type}",` +
    `"timestamp":"2026-11-27T10:00:00.000Z","data":{"id":${id},"name":"Fern","version":12}}`
  );
}

describe('listEvents, getEventCursor and events', () => {
  it('reads a page with ids exact, and the next page from its Link', async () => {
    const server = await startScriptedServer([
      json(200, `[${eventText('900.1')},${eventText('900.2', 'plant.updated')}]`, {
        Link: '<?limit=2&after=900.2>; rel="next"',
      }),
    ]);
    const page = await createTestClient(server.url).listEvents({ limit: 2, after: '899.0' });
    expect(page.events.map((event) => [event.cursor, event.type, event.data.id, event.data.version])).toEqual([
      ['900.1', 'plant.created', 2n ** 53n + 1n, 12n],
      ['900.2', 'plant.updated', 2n ** 53n + 1n, 12n],
    ]);
    expect(page.next).toEqual({ limit: 2, after: '900.2' });
    expect(page.cursor).toBe('900.2');
    expect(server.requests.map(({ url }) => url)).toEqual(['/events?limit=2&after=899.0']);
  });

  it('refuses events out of the feed’s order, of another type than asked, and a Link that goes back', async () => {
    const backwards = await startScriptedServer([json(200, `[${eventText('10.2')},${eventText('9.7')}]`)]);
    expect((await caught(createTestClient(backwards.url).listEvents())).message).toContain(
      'event cursor 9.7 does not come after 10.2',
    );
    const typed = await startScriptedServer([json(200, `[${eventText('10.2', 'plant.deleted')}]`)]);
    expect((await caught(createTestClient(typed.url).listEvents({ type: 'plant.created' }))).message).toContain(
      'a plant.deleted event in a page of plant.created',
    );
    const looping = await startScriptedServer([
      json(200, `[${eventText('10.2')}]`, { Link: '<?limit=1&after=10.1>; rel="next"' }),
      json(200, `[${eventText('10.2')}]`, { Link: '<?limit=1&after=9.1>; rel="next"' }),
    ]);
    const client = createTestClient(looping.url);
    expect((await caught(client.listEvents({ limit: 1 }))).message).toContain(
      "whose next page is not after the page's last event (10.2)",
    );
    expect((await caught(client.listEvents({ limit: 1, after: '10.0' }))).message).toContain('does not move past');
  });

  it('throws the 410 of a cursor older than what is kept, and refuses a cursor that is none before sending', async () => {
    const server = await startScriptedServer([errorAnswer(410, 410, 'the events after cursor 1.0 are no longer kept')]);
    const client = createTestClient(server.url);
    expect(await caught(client.listEvents({ after: '1.0' }))).toMatchObject({ status: 410, error: 410 });
    expect(await caught(client.listEvents({ after: '12' }))).toMatchObject({ kind: 'invalid-input' });
    expect(server.requests).toHaveLength(1);
  });

  it('walks the feed to the end, and with follow keeps asking from the last cursor until aborted', async () => {
    const server = await startScriptedServer((request, index) => {
      if (index === 0) return json(200, `[${eventText('5.1')}]`, { Link: '<?limit=1&after=5.1>; rel="next"' });
      if (index === 1) return json(200, `[${eventText('5.2')}]`);
      if (index === 2) return json(200, '[]');
      if (index === 3) return json(200, `[${eventText('7.1')}]`);
      return json(200, request.url.includes('after=7.1') ? '[]' : '["wrong after"]');
    });
    const client = createTestClient(server.url);
    const walked = [];
    for await (const event of client.events({ pageSize: 1 })) walked.push(event.cursor);
    expect(walked).toEqual(['5.1', '5.2']);

    const controller = new AbortController();
    const followed: string[] = [];
    const error = await caught(
      (async () => {
        for await (const event of client.events({ after: '5.2', follow: true, pollMs: 5, signal: controller.signal })) {
          followed.push(event.cursor);
          controller.abort();
        }
      })(),
    );
    expect(followed).toEqual(['7.1']);
    expect(error.kind).toBe('aborted');
    // Caught up after 5.2 (an empty page), asked again from it, then from nowhere further: aborted.
    expect(server.requests.map(({ url }) => url).slice(2)).toEqual([
      '/events?limit=100&after=5.2',
      '/events?limit=100&after=5.2',
    ]);
  });

  it('reads the current cursor', async () => {
    const server = await startScriptedServer([json(200, '{"cursor":"18446744073709551615.0"}')]);
    expect(await createTestClient(server.url).getEventCursor()).toBe('18446744073709551615.0');
    expect(server.requests.map(({ url }) => url)).toEqual(['/events/cursor']);
  });
});
