import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { isRfc3339DateTime, timestampSchema } from './timestamp.js';

describe('isRfc3339DateTime', () => {
  it.each([
    '2026-11-23T10:48:07.123Z',
    '2026-11-23T10:48:07Z',
    '2026-11-23t10:48:07z',
    '2026-11-23T10:48:07.123456789+05:30',
    '2024-02-29T23:59:59-00:00',
    '1990-12-31T23:59:60Z',
    new Date(0).toISOString(),
  ])('accepts %s', (text) => {
    expect(isRfc3339DateTime(text)).toBe(true);
  });

  it.each([
    ['a date without a time', '2026-11-23'],
    ['a space instead of T', '2026-11-23 10:48:07Z'],
    ['no offset', '2026-11-23T10:48:07'],
    ['an offset without a colon', '2026-11-23T10:48:07+0530'],
    ['February 30th (Date.parse reads it as March 1st)', '2024-02-30T00:00:00Z'],
    ['February 29th of a common year', '2023-02-29T00:00:00Z'],
    ['month 13', '2026-13-01T00:00:00Z'],
    ['hour 24', '2026-11-23T24:00:00Z'],
    ['an empty fraction', '2026-11-23T10:48:07.Z'],
    ['a trailing space', '2026-11-23T10:48:07Z '],
    ['epoch milliseconds as text', '1795430887123'],
  ])('refuses %s', (_label, text) => {
    expect(isRfc3339DateTime(text)).toBe(false);
  });
});

describe('timestampSchema', () => {
  const schema = timestampSchema('createdAt', 'When');

  it('keeps the string as given', () => {
    expect(v.parse(schema, '2026-11-23T10:48:07.123Z')).toBe('2026-11-23T10:48:07.123Z');
  });

  it.each([
    ['a Date object', new Date(0), 'createdAt must be an RFC 3339 date-time string'],
    ['a number', 0, 'createdAt must be an RFC 3339 date-time string'],
    ['a bad string', 'yesterday', 'createdAt must be an RFC 3339 date-time string'],
    ['undefined', undefined, 'createdAt is required'],
  ])('refuses %s', (_label, input, message) => {
    const result = v.safeParse(schema, input);
    expect(result.success ? [] : result.issues.map((issue) => issue.message)).toEqual([message]);
  });
});
