import { RESPONSE_EXCERPT_MAX_BYTES } from '@plant-store/schema';
import { describe, expect, it } from 'vitest';
import { createExcerptCollector, responseExcerptOf } from './response-excerpt.js';

const bytes = (...values: number[]) => Uint8Array.from(values);

describe('responseExcerptOf', () => {
  it('keeps UTF-8 text exactly, and nothing as null', () => {
    expect(responseExcerptOf(Buffer.from('{"error":"café 🌵"}\r\n'))).toBe('{"error":"café 🌵"}\r\n');
    expect(responseExcerptOf(bytes())).toBeNull();
  });

  it('leaves out a character the bound cut at the end, of every length', () => {
    const cactus = Buffer.from('🌵'); // 4 bytes
    for (let cut = 1; cut < 4; cut++) {
      expect(responseExcerptOf(Buffer.concat([Buffer.from('ab'), cactus.subarray(0, cut)]))).toBe('ab');
    }
    expect(responseExcerptOf(Buffer.from('é').subarray(0, 1))).toBeNull();
    expect(responseExcerptOf(Buffer.from('a€').subarray(0, 3))).toBe('a');
  });

  it('shows bytes that are not UTF-8 and NUL as U+FFFD', () => {
    expect(responseExcerptOf(bytes(0x61, 0xff, 0x62))).toBe('a\uFFFDb');
    expect(responseExcerptOf(bytes(0x61, 0x00, 0x62))).toBe('a\uFFFDb');
    // A stray continuation byte in the middle is not a cut character.
    expect(responseExcerptOf(bytes(0x80, 0x61))).toBe('\uFFFDa');
    // A lone lead byte at the end is a cut character.
    expect(responseExcerptOf(bytes(0x61, 0xe2))).toBe('a');
  });
});

describe('createExcerptCollector', () => {
  it(`keeps the first ${RESPONSE_EXCERPT_MAX_BYTES} bytes over however many chunks`, () => {
    const collector = createExcerptCollector();
    collector.add(Buffer.from('x'.repeat(200)));
    collector.add(Buffer.from('y'.repeat(100)));
    collector.add(Buffer.from('z'.repeat(100)));
    expect(collector.text()).toBe('x'.repeat(200) + 'y'.repeat(56));
  });

  it('cuts a character that straddles the bound', () => {
    const collector = createExcerptCollector(5);
    collector.add(Buffer.from('abcd'));
    collector.add(Buffer.from('é'));
    expect(collector.text()).toBe('abcd');
  });
});
