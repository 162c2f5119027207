import { PGlite } from '@electric-sql/pglite';

/**
 * TextDecoder as PGlite's constructor gets it: UTF-8 decoders made without options keep a
 * leading U+FEFF (`ignoreBOM: true`); any other decoder is made as asked.
 */
class TextDecoderKeepingBom extends TextDecoder {
  constructor(label?: string, options?: ConstructorParameters<typeof TextDecoder>[1]) {
    const utf8 = label === undefined || label.toLowerCase() === 'utf-8' || label.toLowerCase() === 'utf8';
    super(label, utf8 && options === undefined ? { ignoreBOM: true } : options);
  }
}

/**
 * A PGlite that returns text exactly as stored. PGlite (0.5.16) reads every field of a result
 * row with one `new TextDecoder('utf-8')`, made in its constructor, whose default
 * (`ignoreBOM: false`) drops a U+FEFF at the start of each field: a plant named "\uFEFF" was
 * stored intact but read back as "" by `GET /plants/{id}`, and a webhook description lost its
 * first character in `POST /webhooks` and `GET /webhooks` (Prisma's PGlite adapter reads
 * through the same decoder). Pages and webhook bodies escaped it only because PostgreSQL writes
 * them as JSON, where no field starts with the text. node-postgres decodes with
 * Buffer#toString, which keeps it. A type parser cannot restore it (PGlite's parsers get the
 * field already decoded), and node_modules stay unpatched: so the instance is constructed while
 * the global `TextDecoder` is one that keeps a leading U+FEFF, and put back straight after. The
 * constructor is synchronous: no other code runs in between, and nothing else gets that class.
 * A query then checks it took (a PGlite that builds its decoder elsewhere fails the open with
 * this explanation, rather than altering text), and the text property test checks every path.
 */
export async function createPGliteKeepingText(dataDir: string): Promise<PGlite> {
  const original = globalThis.TextDecoder;
  let pglite: PGlite;
  globalThis.TextDecoder = TextDecoderKeepingBom;
  try {
    pglite = new PGlite(dataDir);
  } finally {
    globalThis.TextDecoder = original;
  }
  try {
    await pglite.waitReady;
    const { rows } = await pglite.query<{ text: string }>(`SELECT chr(65279) || 'x' AS text`);
    if (rows[0]?.text !== '\uFEFFx') {
      throw new Error(
        'PGlite dropped a leading U+FEFF from a field: the decoder it builds no longer keeps it (see packages/db/src/pglite-exact-text.ts)',
      );
    }
    return pglite;
  } catch (error) {
    await pglite.close().catch(() => {});
    throw error;
  }
}
