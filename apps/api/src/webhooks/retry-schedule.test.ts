import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_SCHEDULE, nextAttemptDelay, parseRetrySchedule } from './retry-schedule.js';

describe('parseRetrySchedule', () => {
  it('reads the default: 7 delays, 8 attempts, about 27.5 hours in all', () => {
    const schedule = parseRetrySchedule(DEFAULT_RETRY_SCHEDULE);
    expect(schedule).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    const hours = schedule.reduce((sum, delay) => sum + delay, 0) / 3_600_000;
    expect(hours).toBeGreaterThan(27.5);
    expect(hours).toBeLessThan(27.6);
  });

  it('reads ms, s, m and h, with spaces around entries', () => {
    expect(parseRetrySchedule('100ms, 2s ,3m,4h')).toEqual([100, 2_000, 180_000, 14_400_000]);
    expect(parseRetrySchedule('1ms')).toEqual([1]);
  });

  it('refuses bad input with a message saying what is wrong', () => {
    expect(() => parseRetrySchedule('')).toThrow('retry schedule must list 1 to 20 delays');
    expect(() => parseRetrySchedule(' ')).toThrow('retry schedule must list 1 to 20 delays');
    expect(() => parseRetrySchedule(Array(21).fill('1s').join(','))).toThrow('must list 1 to 20 delays');
    expect(parseRetrySchedule(Array(20).fill('1s').join(','))).toHaveLength(20);
    for (const entry of ['5', '5x', '1.5s', '-5s', 's', '5 s', '5S']) {
      expect(() => parseRetrySchedule(`1s,${entry}`)).toThrow(
        `retry schedule entry "${entry}" must be a whole number followed by ms, s, m or h`,
      );
    }
    expect(() => parseRetrySchedule('1s,,2s')).toThrow('retry schedule entry "" must be a whole number');
    expect(() => parseRetrySchedule('0s')).toThrow('retry schedule entry "0s" must be greater than zero');
    expect(() => parseRetrySchedule('169h')).toThrow('retry schedule entry "169h" must be at most 168h');
    expect(() => parseRetrySchedule('99999999999999999999h')).toThrow('must be at most 168h');
  });
});

describe('nextAttemptDelay', () => {
  const schedule = [1_000, 10_000];

  it('gives the delay after each attempt, then null once the schedule is used up', () => {
    const middle = () => 0.5; // no jitter
    expect(nextAttemptDelay(schedule, 1, middle)).toBe(1_000);
    expect(nextAttemptDelay(schedule, 2, middle)).toBe(10_000);
    expect(nextAttemptDelay(schedule, 3, middle)).toBeNull();
    expect(nextAttemptDelay(schedule, 0, middle)).toBeNull();
    expect(nextAttemptDelay([], 1, middle)).toBeNull();
  });

  it('jitters by at most ±20%, and spreads across that range', () => {
    expect(nextAttemptDelay(schedule, 2, () => 0)).toBe(8_000);
    expect(nextAttemptDelay(schedule, 2, () => 0.999_999_9)).toBe(12_000);
    const seen = Array.from({ length: 1000 }, () => nextAttemptDelay(schedule, 2) ?? Number.NaN);
    for (const delay of seen) {
      expect(delay).toBeGreaterThanOrEqual(8_000);
      expect(delay).toBeLessThanOrEqual(12_000);
    }
    expect(Math.min(...seen)).toBeLessThan(8_500);
    expect(Math.max(...seen)).toBeGreaterThan(11_500);
  });

  it('never gives less than 1 ms', () => {
    expect(nextAttemptDelay([1], 1, () => 0)).toBe(1);
  });
});
