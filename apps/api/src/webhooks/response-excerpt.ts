import { RESPONSE_EXCERPT_MAX_BYTES } from '@plant-store/schema';

/** Decodes without throwing: bytes that are not UTF-8 become U+FFFD. */
const UTF8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

/**
 * Collects the first `maxBytes` bytes of a receiver's answer body, from its chunks as they are
 * read: a small fixed buffer, whatever the receiver sends.
 */
export function createExcerptCollector(maxBytes = RESPONSE_EXCERPT_MAX_BYTES) {
  const kept = Buffer.alloc(maxBytes);
  let length = 0;
  return {
    add(chunk: Uint8Array): void {
      if (length >= maxBytes) return;
      const taken = Math.min(chunk.length, maxBytes - length);
      kept.set(chunk.subarray(0, taken), length);
      length += taken;
    },
    /** The excerpt as text (see responseExcerptOf). */
    text(): string | null {
      return responseExcerptOf(kept.subarray(0, length));
    },
  };
}

/**
 * The excerpt kept with an attempt: the bytes read as UTF-8, a character cut by the byte bound
 * at the end left out (not shown as U+FFFD), other bytes that are not UTF-8 as U+FFFD, and NUL
 * (which PostgreSQL text cannot hold) as U+FFFD too. Null when there is nothing.
 */
export function responseExcerptOf(bytes: Uint8Array): string | null {
  const whole = bytes.subarray(0, completeUtf8Length(bytes));
  if (whole.length === 0) return null;
  return UTF8.decode(whole).replaceAll('\u0000', '\uFFFD');
}

/** The length of `bytes` without a multi-byte sequence that the end cuts short. */
function completeUtf8Length(bytes: Uint8Array): number {
  // A sequence is at most 4 bytes: look back over at most 3 continuation bytes for its lead.
  let start = bytes.length - 1;
  while (start >= 0 && bytes.length - start <= 4 && ((bytes[start] ?? 0) & 0xc0) === 0x80) start--;
  if (start < 0) return bytes.length;
  const lead = bytes[start] ?? 0;
  const needed = lead >= 0xf0 && lead <= 0xf4 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 && lead < 0xe0 ? 2 : 1;
  // A complete sequence, ASCII, or not UTF-8 at all (left for the decoder to replace).
  return needed > 1 && bytes.length - start < needed ? start : bytes.length;
}
