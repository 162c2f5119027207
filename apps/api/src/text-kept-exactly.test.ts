/**
 * Text kept exactly (issue 28): whatever a client stores as a plant's name or tag, or a webhook's
 * description, comes back byte for byte on every path, on both engines. A property test over
 * text the contract accepts (1-255 code points for a name, at most 255 for a tag or a
 * description, no U+0000, no lone surrogate), leaning on what decoders like to drop or change:
 * a leading U+FEFF (PGlite's decoder dropped it: see packages/db/src/pglite-exact-text.ts),
 * other format characters, bidi controls, astral characters and control characters that JSON
 * escapes, beside ordinary text. A replayed create is compared too: it answers with the row read back.
 */
import { testEngines, testToken } from '@plant-store/db/testing';
import { parseJson, stringifyJson } from '@plant-store/schema';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkedFetch, failOnContractViolations } from './test-support/checked-fetch.js';
import { serviceLifecycle } from './test-support/service-lifecycle.js';
import { startTestService } from './test-support/test-service.js';
import { FAST_WEBHOOKS, SCOPES } from './test-support/webhook-end-to-end.js';
import { type ReceivedWebhook, startWebhookReceiver } from './test-support/webhook-receiver.js';

failOnContractViolations();

/** Generated cases per engine: enough to meet each kind of character many times, quick in CI. */
const RUNS = 60;

const codePoint = (min: number, max: number) => fc.integer({ min, max }).map((point) => String.fromCodePoint(point));

/** Unicode format characters (Cf), soft hyphen and bidi controls: invisible, and easy to lose. */
const FORMAT_CHARACTERS = [
  '\uFEFF',
  '\u00AD',
  '\u061C',
  ...range(0x200b, 0x200f),
  ...range(0x202a, 0x202e),
  ...range(0x2060, 0x2064),
  ...range(0x2066, 0x2069),
  ...range(0xfff9, 0xfffb),
];

function range(first: number, last: number): string[] {
  return Array.from({ length: last - first + 1 }, (_, index) => String.fromCodePoint(first + index));
}

/** One code point of storable text. */
const character = fc.oneof(
  { arbitrary: fc.constantFrom(...FORMAT_CHARACTERS), weight: 3 },
  // Astral: the herb U+1F33F and others, then any (a surrogate pair in UTF-16, 4 bytes in UTF-8).
  { arbitrary: fc.constantFrom('\u{1F33F}', '\u{1F600}', '\u{1FAB4}', '\u{10000}', '\u{10FFFF}'), weight: 1 },
  { arbitrary: codePoint(0x10000, 0x10ffff), weight: 1 },
  { arbitrary: codePoint(0x20, 0x7e), weight: 3 },
  // The rest of the BMP but NUL and the surrogates: C0 controls (escaped in JSON), Latin, CJK...
  { arbitrary: fc.oneof(codePoint(0x01, 0xd7ff), codePoint(0xe000, 0xffff)), weight: 2 },
);

/** Text of `minLength` to `maxLength` code points, about half of it starting with U+FEFF. */
function storableText(minLength: number, maxLength: number): fc.Arbitrary<string> {
  const text = (min: number, max: number) =>
    fc.oneof(
      fc.string({ unit: character, minLength: min, maxLength: max }),
      // Lengths across the whole range too, and the longest allowed.
      fc.string({ unit: character, minLength: min, maxLength: max, size: 'max' }),
      fc.string({ unit: character, minLength: max, maxLength: max }),
    );
  return fc.oneof(
    text(minLength, maxLength),
    text(Math.max(0, minLength - 1), maxLength - 1).map((rest) => `\uFEFF${rest}`),
  );
}

interface Case {
  readonly name: string;
  readonly tag: string | undefined;
  readonly description: string | undefined;
}

const cases: fc.Arbitrary<Case> = fc.record({
  name: storableText(1, 255),
  tag: fc.option(storableText(0, 255), { nil: undefined }),
  description: fc.option(storableText(0, 255), { nil: undefined }),
});

/** Always tried first: the issue's reproducers and the longest astral text. */
const EXAMPLES: Case[] = [
  { name: '\uFEFF', tag: '\uFEFF', description: '\uFEFF' },
  { name: '\uFEFFMonstera', tag: '\uFEFFtropical', description: '\uFEFFops' },
  { name: '\u{1F33F}'.repeat(255), tag: '\u{1F33F}'.repeat(255), description: '\u{1F33F}'.repeat(255) },
];

/** Fails with both sides readable (JSON-escaped) and in hex, unless the bytes are the same. */
function expectSameBytes(where: string, actual: Uint8Array, expected: string): void {
  const wanted = Buffer.from(expected, 'utf8');
  if (Buffer.from(actual).equals(wanted)) return;
  const got = new TextDecoder('utf-8', { ignoreBOM: true }).decode(actual);
  throw new Error(
    `${where}: not the bytes stored\n  got      ${visible(got)}\n           ${Buffer.from(actual).toString('hex')}\n` +
      `  expected ${visible(expected)}\n           ${wanted.toString('hex')}`,
  );
}

/** Every code point outside printable ASCII as \u{...}: format characters are invisible otherwise. */
function visible(text: string): string {
  return [...text].map((c) => (/^[\x20-\x7e]$/.test(c) ? c : `\\u{${c.codePointAt(0)?.toString(16)}}`)).join('');
}

/** A request whose answer is kept as bytes, checked against the OpenAPI document like the others. */
async function call(
  baseUrl: string,
  path: string,
  token: string,
  init: { method?: string; body?: string } = {},
): Promise<{ status: number; bytes: Uint8Array; body: unknown }> {
  const response = await checkedFetch(new URL(path, baseUrl), {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      authorization: `Bearer ${token}`,
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  const bytes = new Uint8Array(await response.arrayBuffer());
  // Fatal and BOM-keeping: nothing in the answer is hidden or repaired by the test's own decoding.
  const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  return { status: response.status, bytes, body: text === '' ? undefined : parseJson(text) };
}

describe.each(testEngines())('text kept exactly on %s', (engine) => {
  const { cleanups, storage } = serviceLifecycle(engine);

  it(`returns names, tags and descriptions byte for byte on every path (${RUNS} generated cases)`, async () => {
    const service = await startTestService(await storage(), {
      ...FAST_WEBHOOKS,
      // Attempts that outlive a loaded machine's pauses: each run waits for its one event.
      WEBHOOKS_TIMEOUT_MS: '10000',
      WEBHOOKS_LEASE_MS: '30000',
    });
    cleanups.push(() => service.close());
    const receiver = await startWebhookReceiver();
    cleanups.push(() => receiver.close());
    const { token } = await service.db.issueToken(testToken({ name: 'text', scopes: SCOPES }));
    let nextId = 1n;
    const seen = { leadingBom: 0, otherFormat: 0, astral: 0, longest: 0 };

    const property = fc.asyncProperty(cases, async ({ name, tag, description }) => {
      const id = nextId++;
      const texts = [name, tag, description].filter((text) => text !== undefined);
      if (texts.some((text) => text.startsWith('\uFEFF'))) seen.leadingBom++;
      if (texts.some((text) => FORMAT_CHARACTERS.some((c) => c !== '\uFEFF' && text.includes(c)))) seen.otherFormat++;
      if (texts.some((text) => /[\u{10000}-\u{10FFFF}]/u.test(text))) seen.astral++;
      if (texts.some((text) => [...text].length === 255)) seen.longest++;
      const plant = tag === undefined ? { id, name } : { id, name, tag };
      const plantJson = stringifyJson(plant);

      // One subscription at a time, carrying the description: this plant's event goes to it only.
      const created = await call(service.url, '/webhooks', token, {
        body: JSON.stringify(description === undefined ? { url: receiver.url } : { url: receiver.url, description }),
      });
      expect(created.status).toBe(201);
      const webhook = created.body as { id: string; description?: string };
      try {
        expect('description' in webhook).toBe(description !== undefined);
        if (description !== undefined) {
          expectSameBytes('POST /webhooks description', Buffer.from(webhook.description ?? ''), description);
        }

        const answered = await call(service.url, '/plants', token, { body: plantJson });
        expect(answered.status).toBe(200);
        expectSameBytes('POST /plants', answered.bytes, plantJson);

        // A replay answers with the stored row, read back from the database.
        const replayed = await call(service.url, '/plants', token, { body: plantJson });
        expect(replayed.status).toBe(200);
        expectSameBytes('POST /plants, replayed', replayed.bytes, plantJson);

        const read = await call(service.url, `/plants/${id}`, token);
        expect(read.status).toBe(200);
        expectSameBytes('GET /plants/{id}', read.bytes, plantJson);

        const page = await call(service.url, `/plants?after=${id - 1n}&limit=1`, token);
        expect(page.status).toBe(200);
        expectSameBytes('GET /plants', page.bytes, `[${plantJson}]`);

        if (tag !== undefined) {
          const tagged = await call(
            service.url,
            `/plants?tag=${encodeURIComponent(tag)}&after=${id - 1n}&limit=1`,
            token,
          );
          expect(tagged.status).toBe(200);
          expectSameBytes('GET /plants?tag=', tagged.bytes, `[${plantJson}]`);
        }

        // Delivery is at least once: an earlier plant's event may come again; this one's is awaited.
        const isThisPlant = (event: ReceivedWebhook) => (parseJson(event.body) as { id: bigint }).id === id;
        const deadline = Date.now() + 20_000;
        let event = receiver.received.find(isThisPlant);
        while (event === undefined) {
          await receiver.waitFor(receiver.received.length + 1, Math.max(1, deadline - Date.now()));
          event = receiver.received.find(isThisPlant);
        }
        expectSameBytes('webhook body', event.bytes, plantJson);

        const listed = await call(service.url, '/webhooks', token);
        expect(listed.status).toBe(200);
        const [only, ...others] = listed.body as Array<{ id: string; description?: string }>;
        expect(others).toEqual([]);
        expect(only?.id).toBe(webhook.id);
        expect(only !== undefined && 'description' in only).toBe(description !== undefined);
        if (description !== undefined) {
          expectSameBytes('GET /webhooks description', Buffer.from(only?.description ?? ''), description);
        }
      } finally {
        expect((await call(service.url, `/webhooks/${webhook.id}`, token, { method: 'DELETE' })).status).toBe(204);
      }
    });

    await fc.assert(property, { numRuns: RUNS, examples: EXAMPLES.map((example) => [example]) });
    process.stderr.write(
      `text kept exactly on ${engine}: ${nextId - 1n} cases on every path; with a leading U+FEFF ${seen.leadingBom}, ` +
        `other format characters ${seen.otherFormat}, astral characters ${seen.astral}, 255 code points ${seen.longest}\n`,
    );
  });
});
