/**
 * When a failed webhook delivery is tried again.
 *
 * The default is Svix's schedule, which the Standard Webhooks spec recommends: the first attempt
 * at once, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h: 8 attempts over about 27.5 h.
 * The early retries absorb a blip (a deploy, a restart); the late ones outlast a receiver that is
 * down overnight or over a long incident, without hammering it meanwhile. Every delay gets ±20%
 * jitter: after an outage, the deliveries that piled up come back spread out instead of all at
 * the same instant (a thundering herd on a receiver that has only just recovered).
 */
export const DEFAULT_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,10h';

/** More would mean days of retries for a receiver that is plainly gone. */
export const MAX_RETRY_SCHEDULE_ENTRIES = 20;

/** One delay's ceiling: a week. Longer is surely a typo (and keeps every sum a safe integer). */
const MAX_DELAY_MS = 7 * 24 * 60 * 60 * 1000;

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** How much a delay may move either way: 0.2 = ±20%. */
export const RETRY_JITTER = 0.2;

/**
 * Parses a comma-separated list of delays (`5s,5m,30m,2h`; units ms, s, m, h) into milliseconds:
 * the delay after attempt 1, 2, ... Throws an Error saying what is wrong.
 */
export function parseRetrySchedule(text: string): number[] {
  const entries = text.split(',').map((entry) => entry.trim());
  if (text.trim() === '' || entries.length > MAX_RETRY_SCHEDULE_ENTRIES) {
    throw new Error(
      `retry schedule must list 1 to ${MAX_RETRY_SCHEDULE_ENTRIES} delays, such as ${DEFAULT_RETRY_SCHEDULE}`,
    );
  }
  return entries.map((entry) => {
    const match = /^(\d+)(ms|s|m|h)$/.exec(entry);
    const amount = match?.[1];
    const unit = match?.[2] as keyof typeof UNIT_MS | undefined;
    if (amount === undefined || unit === undefined) {
      throw new Error(
        `retry schedule entry "${entry}" must be a whole number followed by ms, s, m or h (such as ${DEFAULT_RETRY_SCHEDULE})`,
      );
    }
    const delayMs = Number(amount) * UNIT_MS[unit];
    if (delayMs <= 0) throw new Error(`retry schedule entry "${entry}" must be greater than zero`);
    if (delayMs > MAX_DELAY_MS) throw new Error(`retry schedule entry "${entry}" must be at most 168h`);
    return delayMs;
  });
}

/**
 * The wait after attempt `attemptNumber` (1 = the first) failed, with ±20% jitter, in whole
 * milliseconds; or null when that was the last attempt (schedule length + 1 attempts in all).
 * `random` returns a number in [0, 1), as Math.random does.
 */
export function nextAttemptDelay(
  scheduleMs: readonly number[],
  attemptNumber: number,
  random: () => number = Math.random,
): number | null {
  const delayMs = scheduleMs[attemptNumber - 1];
  if (delayMs === undefined || attemptNumber < 1) return null;
  const factor = 1 + (random() * 2 - 1) * RETRY_JITTER;
  return Math.max(1, Math.round(delayMs * factor));
}
