import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';

export type Coding = 'gzip' | 'deflate' | 'br';

export const CODINGS: readonly Coding[] = ['gzip', 'deflate', 'br'];

export const compressors: Readonly<Record<Coding, (body: Buffer) => Buffer>> = {
  gzip: gzipSync,
  deflate: deflateSync,
  br: brotliCompressSync,
};

/** Bytes that are no compressed stream in any of the codings. */
export const GARBAGE = Buffer.from('definitely not compressed, in any coding at all');

/**
 * A JSON object of `size` bytes, `{"pad":"..."}`, the padding letters and digits drawn from a
 * seeded generator: compressed, it is about as long as decoded, so a stream cut short or corrupt
 * at its end has decoded nearly all of it by then.
 */
export function jsonOfSize(size: number): Buffer {
  const head = '{"pad":"';
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  let seed = size;
  const pad = Array.from({ length: size - head.length - 2 }, () => {
    seed = (seed * 48_271) % 2_147_483_647;
    return alphabet[seed % alphabet.length];
  });
  return Buffer.from(`${head}${pad.join('')}"}`);
}

/** The compressed stream with its checksum (gzip's CRC-32, zlib's Adler-32) wrong; brotli has none. */
export function wrongChecksum(coding: 'gzip' | 'deflate', compressed: Buffer): Buffer {
  const copy = Buffer.from(compressed);
  // gzip ends with CRC-32 and length (8 bytes), zlib with Adler-32 (4 bytes).
  const at = copy.length - (coding === 'gzip' ? 6 : 2);
  copy[at] = (copy[at] ?? 0) ^ 0xff;
  return copy;
}

/** The stream without its last 4 bytes: a gzip stream's length, zlib's checksum, brotli's last bits. */
export function truncated(compressed: Buffer): Buffer {
  return compressed.subarray(0, compressed.length - 4);
}

/**
 * Issue 28's reproducer, in `coding`: JSON nested 53,548 deep (107 KB decoded, 64 KiB the
 * default limit), its checksum wrong. Answered 413, it used to take the process down when zlib
 * then found the checksum with nobody listening.
 */
export function issue28Reproducer(coding: 'gzip' | 'deflate'): Buffer {
  const depth = 53_548;
  return wrongChecksum(coding, compressors[coding](Buffer.from(`{"a":${'['.repeat(depth)}1${']'.repeat(depth)}}`)));
}
