import { PGlite } from '@electric-sql/pglite';
import { afterEach, describe, expect, it } from 'vitest';
import { createPGliteKeepingText } from './pglite-exact-text.js';

const LEADING_BOM = `SELECT chr(65279) AS alone, chr(65279) || 'Fern' AS leading, 'Fe' || chr(65279) || 'rn' AS inside`;

describe('createPGliteKeepingText', () => {
  const opened: PGlite[] = [];
  afterEach(async () => {
    for (const pglite of opened.splice(0)) await pglite.close();
  });

  it('reads a leading U+FEFF back, where a plain PGlite drops it', async () => {
    const plain = await PGlite.create();
    opened.push(plain);
    const keeping = await createPGliteKeepingText('memory://');
    opened.push(keeping);

    // The fault the helper works around: when this fails, PGlite keeps the character itself,
    // and pglite-exact-text.ts can go.
    expect((await plain.query(LEADING_BOM)).rows).toEqual([{ alone: '', leading: 'Fern', inside: 'Fe\uFEFFrn' }]);
    expect((await keeping.query(LEADING_BOM)).rows).toEqual([
      { alone: '\uFEFF', leading: '\uFEFFFern', inside: 'Fe\uFEFFrn' },
    ]);
  });

  it('leaves the global TextDecoder as it was', async () => {
    const before = globalThis.TextDecoder;
    opened.push(await createPGliteKeepingText('memory://'));
    expect(globalThis.TextDecoder).toBe(before);
    // A decoder made afterwards still has the standard default (drops a leading BOM).
    expect(new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x61]))).toBe('a');
  });
});
