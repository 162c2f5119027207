import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { createPlantStoreClient } from '@plant-store/client';
import { BULK_APPLICATION_NAME } from '@plant-store/db';
import { createTestStorage, type TestStorage, testEngines, testToken } from '@plant-store/db/testing';
import { EXPORT_CURSOR_HEADER, INT64_MAX, INT64_MIN, parseJson, type StoredPlant } from '@plant-store/schema';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { checkedFetch, failOnContractViolations } from '../test-support/checked-fetch.js';
import { expectError } from '../test-support/expect-error.js';
import { request, startTestService, type TestService } from '../test-support/test-service.js';
import { waitUntil } from '../test-support/wait-until.js';
import { FAST_WEBHOOKS, subscribe } from '../test-support/webhook-end-to-end.js';
import { startWebhookReceiver } from '../test-support/webhook-receiver.js';

failOnContractViolations();

const NDJSON = 'application/x-ndjson';

function ndjson(lines: readonly unknown[]): string {
  return lines.map((line) => (typeof line === 'string' ? line : plantLine(line as StoredPlant))).join('\n');
}

/** A plant as one exact JSON line (ids beyond 2^53 kept). */
function plantLine(plant: StoredPlant): string {
  const tag = plant.tag === undefined ? '' : `,"tag":${JSON.stringify(plant.tag)}`;
  return `{"id":${plant.id},"name":${JSON.stringify(plant.name)}${tag}}`;
}

function exportedLines(text: string): StoredPlant[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => parseJson(line) as StoredPlant);
}

/** `count` plants from `first` on, every third tagged `bulk`, as NDJSON chunks of 1,000 lines. */
async function* bulkLines(first: bigint, count: number): AsyncGenerator<Buffer> {
  for (let start = 0; start < count; start += 1_000) {
    const lines: string[] = [];
    for (let i = start; i < Math.min(count, start + 1_000); i++) {
      const id = first + BigInt(i);
      lines.push(plantLine(i % 3 === 0 ? { id, name: `bulk ${id}`, tag: 'bulk' } : { id, name: `bulk ${id}` }));
    }
    yield Buffer.from(`${lines.join('\n')}\n`);
  }
}

describe.each(testEngines())('POST /plants/import and GET /plants/export on %s', (engine) => {
  let storage: TestStorage;
  let service: TestService;
  let writer: string;
  let reader: string;

  async function importText(body: string | Uint8Array, headers: Record<string, string> = {}) {
    return await request(service.url, '/plants/import', { token: writer, body, contentType: NDJSON, headers });
  }

  async function exportText(path = '/plants/export') {
    return await request(service.url, path, { token: reader });
  }

  /** The import's session: its last statement, and whether it holds a transaction id. */
  async function bulkSession(): Promise<{ query: string; transaction: boolean } | undefined> {
    const client = new pg.Client({ connectionString: storage.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ query: string; transaction: boolean }>(
        `SELECT query, backend_xid IS NOT NULL AS transaction FROM pg_stat_activity
         WHERE application_name = $1 AND datname = current_database() AND query LIKE 'COPY %'`,
        [BULK_APPLICATION_NAME],
      );
      return rows[0];
    } finally {
      await client.end();
    }
  }

  async function busyBulkSessions(): Promise<number> {
    const client = new pg.Client({ connectionString: storage.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ busy: number }>(
        `SELECT count(*)::int AS busy FROM pg_stat_activity
         WHERE application_name = $1 AND datname = current_database() AND state <> 'idle'`,
        [BULK_APPLICATION_NAME],
      );
      return rows[0]?.busy ?? 0;
    } finally {
      await client.end();
    }
  }

  beforeAll(async () => {
    storage = await createTestStorage(engine, { migrated: true });
    // Loopback receivers allowed and a fast poll: imported plants are delivered to a subscription too.
    service = await startTestService(storage, FAST_WEBHOOKS);
    writer = (await service.db.issueToken(testToken({ name: 'writer', scopes: ['plants:write'] }))).token;
    reader = (await service.db.issueToken(testToken({ name: 'reader', scopes: ['plants:read'] }))).token;
  });
  afterAll(async () => {
    await service?.close();
    await storage?.dispose();
  });

  it('stores every line, exact at both int64 ends, announces them, and exports them in id order', async () => {
    const plants: StoredPlant[] = [
      { id: INT64_MAX, name: 'Top' },
      { id: 2n ** 53n + 1n, name: 'Exact', tag: 'edge' },
      { id: INT64_MIN, name: 'Bottom', tag: 'edge' },
    ];
    const before = await request(service.url, '/events/cursor', { token: reader });
    const imported = await importText(`${ndjson(plants)}\r\n\n`);
    expect(imported.status).toBe(200);
    expect(imported.body).toEqual({ lines: 3n, stored: 3n, alreadyStored: 0n });

    const after = (before.body as { cursor: string }).cursor;
    await waitUntil(async () => {
      const events = await request(service.url, `/events?after=${after}`, { token: reader });
      return (events.body as unknown[]).length === 3;
    }, 30_000);
    const audit = await service.db.listAuditEvents({ limit: 100, team: 'default' });
    expect(audit.events.map((event) => [event.action, event.actor.name, event.details])).toContainEqual([
      'plants.imported',
      'writer',
      { lines: 3, stored: 3, alreadyStored: 0 },
    ]);

    const exported = await exportText();
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toBe(NDJSON);
    expect(exported.headers.get(EXPORT_CURSOR_HEADER)).toMatch(/^\d+\.0$/);
    expect(exported.text).toBe(
      `{"id":${INT64_MIN},"name":"Bottom","tag":"edge"}\n{"id":${2n ** 53n + 1n},"name":"Exact","tag":"edge"}\n{"id":${INT64_MAX},"name":"Top"}\n`,
    );
    const strings = await request(service.url, '/plants/export?tag=edge', {
      token: reader,
      headers: { 'plant-store-int64': 'string' },
    });
    expect(strings.text).toBe(
      `{"id":"${INT64_MIN}","name":"Bottom","tag":"edge"}\n{"id":"${2n ** 53n + 1n}","name":"Exact","tag":"edge"}\n`,
    );
    const edge = await exportText('/plants/export?tag=edge');
    expect(exportedLines(edge.text).map((plant) => plant.id)).toEqual([INT64_MIN, 2n ** 53n + 1n]);
  });

  it('answers an identical retry 200, every line already stored', async () => {
    const plants = [
      { id: 10n, name: 'Ten' },
      { id: 11n, name: 'Eleven', tag: 'x' },
    ];
    expect((await importText(ndjson(plants))).body).toEqual({ lines: 2n, stored: 2n, alreadyStored: 0n });
    expect((await importText(ndjson([...plants, plants[0]]))).body).toEqual({
      lines: 3n,
      stored: 0n,
      alreadyStored: 2n,
    });
  });

  it.each([
    ['invalid JSON', ['{"id":20,"name":"ok"}', '{"id":21,"name":'], /^line 2: not valid JSON/],
    ['not an object', ['{"id":20,"name":"ok"}', '[1]'], /^line 2: must be a JSON object$/],
    [
      'a rule broken',
      ['{"id":20,"name":"ok"}', '', '{"id":21,"name":""}'],
      /^line 3: name must be a string of 1 to 255/,
    ],
    [
      'an id repeated with other content',
      ['{"id":20,"name":"ok"}', '{"id":21,"name":"a"}', '{"id":20,"name":"other"}'],
      /^line 3: id 20 is repeated from line 1 with another name or tag$/,
    ],
    [
      'an id stored with other content',
      ['{"id":20,"name":"ok"}', '{"id":10,"name":"Not ten"}'],
      /^line 2: a plant with id 10 already exists with a different name or tag$/,
    ],
  ])('refuses %s with a 400 naming the line, and stores nothing', async (_, lines, message) => {
    const refused = await importText(lines.join('\n'));
    expectError(refused, 400);
    expect((refused.body as { message: string }).message).toMatch(message);
    expect(await service.db.findPlant(20n)).toBeNull();
  });

  it('refuses a line over the limit, another media type, and a token without plants:write', async () => {
    const long = await importText(`{"id":30,"name":"${'x'.repeat(70_000)}"}\n`);
    expectError(long, 400);
    expect((long.body as { message: string }).message).toBe('line 1: longer than the limit of 65536 bytes');
    expectError(await request(service.url, '/plants/import', { token: writer, body: '{"id":30,"name":"a"}' }), 415);
    expectError(
      await request(service.url, '/plants/import', {
        token: reader,
        body: '{"id":30,"name":"a"}',
        contentType: NDJSON,
      }),
      403,
    );
    expect(await service.db.findPlant(30n)).toBeNull();
  });

  it('takes a gzip body, refuses a corrupt one, and answers gzip when asked', async () => {
    const zipped = gzipSync(ndjson([{ id: 40n, name: 'Zipped', tag: 'gz' }]));
    expect((await importText(zipped, { 'content-encoding': 'gzip' })).body).toEqual({
      lines: 1n,
      stored: 1n,
      alreadyStored: 0n,
    });
    const corrupt = Buffer.from(gzipSync(ndjson([{ id: 41n, name: 'Corrupt' }])));
    corrupt[corrupt.length - 6] = (corrupt[corrupt.length - 6] ?? 0) ^ 0xff;
    expectError(await importText(corrupt, { 'content-encoding': 'gzip' }), 400);
    expect(await service.db.findPlant(41n)).toBeNull();

    const raw = await rawGet(service.url, '/plants/export?tag=gz', reader, { 'accept-encoding': 'gzip' });
    expect(raw.response.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(raw.body).toString()).toBe('{"id":40,"name":"Zipped","tag":"gz"}\n');
  });

  it('stores nothing of an import whose client hangs up half-way', async () => {
    const url = new URL('/plants/import', service.url);
    const sent = httpRequest(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${writer}`, 'content-type': NDJSON },
    });
    sent.on('error', () => {});
    let answered = false;
    sent.on('response', () => {
      answered = true;
    });
    for await (const chunk of bulkLines(500_000n, 5_000)) {
      if (!sent.write(chunk)) await new Promise((resolve) => sent.once('drain', resolve));
    }
    sent.destroy();
    if (engine === 'postgres') await waitUntil(async () => (await busyBulkSessions()) === 0, 10_000);
    // The same ids with other content are new to a later import: the first stored none of them.
    const again = await importText(ndjson([{ id: 500_000n, name: 'Not bulk' }]));
    expect(again.body).toEqual({ lines: 1n, stored: 1n, alreadyStored: 0n });
    expect(answered).toBe(false);
  });

  it.skipIf(engine !== 'postgres')(
    "holds back no one's events while its body is still arriving: another create is in the feed at once",
    async () => {
      const cursor = (await exportText('/plants/export?tag=none-such')).headers.get(EXPORT_CURSOR_HEADER);
      const sent = httpRequest(new URL('/plants/import', service.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${writer}`, 'content-type': NDJSON },
      });
      sent.on('error', () => {});
      const answer = new Promise<IncomingMessage>((resolve) => sent.on('response', resolve));
      // Untagged (the 100,000-plant test counts the tag bulk).
      for (let start = 800_000; start < 820_000; start += 1_000) {
        const chunk = Array.from({ length: 1_000 }, (_, i) => `{"id":${start + i},"name":"staged ${start + i}"}\n`);
        if (!sent.write(chunk.join(''))) await new Promise((resolve) => sent.once('drain', resolve));
      }
      // The lines sent are staged (the import's session has run its COPYs); the body is not done.
      await waitUntil(async () => (await bulkSession())?.query.startsWith('COPY') === true, 10_000);
      await request(service.url, '/plants', { token: writer, body: '{"id":799999,"name":"Meanwhile"}' });
      await waitUntil(async () => {
        const feed = await request(service.url, `/events?after=${cursor}`, { token: reader });
        return (feed.body as Array<{ data: { id: bigint } }>).some((event) => event.data.id === 799_999n);
      }, 30_000);
      expect((await bulkSession())?.transaction).toBe(false);
      sent.end();
      const response = await answer;
      expect(response.statusCode).toBe(200);
      expect(await service.db.findPlant(819_999n)).not.toBeNull();
    },
  );

  it('takes an import whose body takes longer than the request timeout to send', async () => {
    // A service of its own: its short request timeout would cut other tests' requests on a busy machine.
    const slowStorage = await createTestStorage(engine, { migrated: true });
    const slow = await startTestService(slowStorage, { REQUEST_TIMEOUT_MS: '1000', HEADERS_TIMEOUT_MS: '1000' });
    onTestFinished(async () => {
      await slow.close();
      await slowStorage.dispose();
    });
    const slowWriter = (await slow.db.issueToken(testToken({ name: 'writer', scopes: ['plants:write'] }))).token;
    const url = new URL('/plants/import', slow.url);
    const answer = new Promise<IncomingMessage>((resolve, reject) => {
      const sent = httpRequest(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${slowWriter}`, 'content-type': NDJSON },
      });
      sent.on('response', resolve);
      sent.on('error', reject);
      let id = 600;
      const trickle = setInterval(() => {
        sent.write(`{"id":${id},"name":"slow ${id}"}\n`);
        id += 1;
        if (id === 606) {
          clearInterval(trickle);
          sent.end();
        }
      }, 400);
    });
    const response = await answer;
    expect(response.statusCode).toBe(200);
    expect(await slow.db.findPlant(605n)).not.toBeNull();
  });

  it('imports and exports 100,000 plants, every one exact and in order, gzip too', async () => {
    const response = await fetch(new URL('/plants/import', service.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${writer}`, 'content-type': NDJSON },
      body: ReadableStreamFrom(bulkLines(1_000_000n, 100_000)),
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ lines: 100_000, stored: 100_000, alreadyStored: 0 });

    const exported = await checkedFetch(new URL('/plants/export', service.url), {
      headers: { authorization: `Bearer ${reader}` },
    });
    const plants = exportedLines(await exported.text());
    const bulk = plants.filter((plant) => plant.id >= 1_000_000n && plant.id < 1_100_000n);
    expect(bulk).toHaveLength(100_000);
    bulk.forEach((plant, i) => {
      const id = 1_000_000n + BigInt(i);
      expect(plant).toEqual(i % 3 === 0 ? { id, name: `bulk ${id}`, tag: 'bulk' } : { id, name: `bulk ${id}` });
    });
    for (let i = 1; i < plants.length; i++) expect((plants[i - 1]?.id ?? 0n) < (plants[i]?.id ?? 0n)).toBe(true);

    const zipped = await rawGet(service.url, '/plants/export?tag=bulk', reader, { 'accept-encoding': 'gzip' });
    const tagged = exportedLines(gunzipSync(zipped.body).toString());
    expect(tagged).toHaveLength(33_334);
    expect(tagged.every((plant) => plant.tag === 'bulk')).toBe(true);
  });

  it('imports and exports through @plant-store/client: a file, an iterable of plants, gzip, the cursor', async () => {
    const client = createPlantStoreClient({ baseUrl: service.url, token: writer, fetch: checkedFetch });
    const folder = await mkdtemp(join(tmpdir(), 'plant-import-'));
    onTestFinished(() => rm(folder, { recursive: true, force: true }));
    const file = join(folder, 'plants.ndjson');
    await writeFile(file, `${ndjson([{ id: 700n, name: 'From a file', tag: 'client' }])}\n`);
    const progress: number[] = [];
    expect(await client.importPlants(file, { onProgress: ({ lines }) => progress.push(lines) })).toEqual({
      lines: 1,
      stored: 1,
      alreadyStored: 0,
    });
    expect(progress.at(-1)).toBe(1);
    const plants = [
      { id: INT64_MAX - 1n, name: 'From an iterable', tag: 'client' },
      { id: 701n, name: 'Also', tag: 'client' },
    ];
    expect(await client.importPlants(plants, { gzip: true })).toEqual({ lines: 2, stored: 2, alreadyStored: 0 });
    const refused = await client.importPlants([{ id: 700n, name: 'Other', tag: 'client' }]).catch((error) => error);
    expect(refused).toMatchObject({
      status: 400,
      error: 400,
      message: expect.stringMatching(/^line 1: a plant with id 700/),
    });

    const readerClient = createPlantStoreClient({ baseUrl: service.url, token: reader, fetch: checkedFetch });
    const cursors: string[] = [];
    const exported: StoredPlant[] = [];
    for await (const plant of readerClient.exportPlants(
      { tag: 'client' },
      { onCursor: (cursor) => cursors.push(cursor) },
    )) {
      exported.push(plant);
    }
    expect(exported).toEqual([
      { id: 700n, name: 'From a file', tag: 'client' },
      { id: 701n, name: 'Also', tag: 'client' },
      { id: INT64_MAX - 1n, name: 'From an iterable', tag: 'client' },
    ]);
    expect(cursors).toHaveLength(1);
    // Stopping early ends the request.
    for await (const plant of readerClient.exportPlants()) {
      expect(plant.id).toBe(INT64_MIN);
      break;
    }
  });

  it('imports a Blob as it is (sent whole, with its length), and a gzip file as it is with gzipped', async () => {
    const client = createPlantStoreClient({ baseUrl: service.url, token: writer, fetch: checkedFetch });
    const plain = new Blob([`${ndjson([{ id: 710n, name: 'From a Blob', tag: 'blob' }])}\n`]);
    expect(await client.importPlants(plain)).toEqual({ lines: 1, stored: 1, alreadyStored: 0 });
    const gzipped = new Blob([gzipSync(`${ndjson([{ id: 711n, name: 'From a gzip file', tag: 'blob' }])}\n`)]);
    expect(await client.importPlants(gzipped, { gzipped: true })).toEqual({ lines: 1, stored: 1, alreadyStored: 0 });
    // The same gzip bytes not said to be gzip: not NDJSON, refused, nothing stored.
    await expect(client.importPlants(gzipped)).rejects.toMatchObject({ status: 400 });
    await expect(client.importPlants(plain, { gzip: true, gzipped: true })).rejects.toThrow(TypeError);
    const readerClient = createPlantStoreClient({ baseUrl: service.url, token: reader, fetch: checkedFetch });
    expect((await readerClient.listPlants({ tag: 'blob' })).plants.map(({ id, name }) => [id, name])).toEqual([
      [710n, 'From a Blob'],
      [711n, 'From a gzip file'],
    ]);
  });

  it('announces imported plants to subscriptions, like any create', async () => {
    const manager = (
      await service.db.issueToken(testToken({ name: 'hooks', scopes: ['plants:read', 'webhooks:manage'] }))
    ).token;
    const receiver = await startWebhookReceiver();
    onTestFinished(() => receiver.close());
    await subscribe(service.url, manager, receiver.url);
    const imported = await importText(
      ndjson([
        { id: 800n, name: 'Announced' },
        { id: 801n, name: 'Too', tag: 'hook' },
      ]),
    );
    expect(imported.status).toBe(200);
    const received = await receiver.waitFor(2, 15_000);
    // A subscription to plant.created alone gets the NewPlant, byte for byte what a create's delivery carries.
    expect(received.map((delivery) => delivery.body).sort()).toEqual([
      '{"id":800,"name":"Announced"}',
      '{"id":801,"name":"Too","tag":"hook"}',
    ]);
  });

  it('gives its connection back when the client hangs up half-way through an export', async () => {
    const got = await new Promise<IncomingMessage>((resolve, reject) => {
      const sent = httpRequest(new URL('/plants/export', service.url), {
        headers: { authorization: `Bearer ${reader}` },
      });
      sent.on('response', resolve);
      sent.on('error', reject);
      sent.end();
    });
    expect(got.statusCode).toBe(200);
    await new Promise((resolve) => got.once('data', resolve));
    got.destroy();
    if (engine === 'postgres') await waitUntil(async () => (await busyBulkSessions()) === 0, 10_000);
    // On PGlite the export's transaction held the database: a read answers once it has ended.
    const read = await request(service.url, '/plants/10', { token: reader });
    expect(read.status).toBe(200);
    const again = await exportText('/plants/export?tag=x');
    expect(again.text).toBe('{"id":11,"name":"Eleven","tag":"x"}\n');
  });
});

/** A GET read raw (no decoding), for the bytes as they came. */
async function rawGet(
  baseUrl: string,
  path: string,
  token: string,
  headers: Record<string, string>,
): Promise<{ response: IncomingMessage; body: Buffer }> {
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const sent = httpRequest(new URL(path, baseUrl), { headers: { authorization: `Bearer ${token}`, ...headers } });
    sent.on('response', resolve);
    sent.on('error', reject);
    sent.end();
  });
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return { response, body: Buffer.concat(chunks) };
}

/** An async iterable of bytes as a web ReadableStream (a fetch body). */
function ReadableStreamFrom(chunks: AsyncIterable<Buffer>): ReadableStream<Uint8Array> {
  const iterator = chunks[Symbol.asyncIterator]();
  return new ReadableStream({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(new Uint8Array(next.value));
    },
  });
}
