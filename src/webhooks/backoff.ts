// When a failed delivery is tried again: exponential backoff with jitter,
// from a first delay of a few seconds, doubling to a ceiling, until the event
// is `giveUpAfterMs` old; then the delivery is marked failed (listable and
// redeliverable, docs/webhooks.md).

export interface BackoffSchedule {
  /** The delay after the first failed attempt, before jitter. */
  firstMs: number;
  /** No delay grows beyond this. */
  maxMs: number;
  /** Attempts stop once the event is this old; the delivery is then failed. */
  giveUpAfterMs: number;
}

/**
 * 2 s doubling: attempts at about 0, 2, 6, 14, 30, 62 s…, so a receiver down
 * for 30 s is retried at most 32 s after it is back (the delay that spans its
 * return is at most 32 s); capped at one hour, for 25 hours in all (at least
 * the 24 h receivers are promised, with margin for the last jitter).
 */
export const DEFAULT_SCHEDULE: BackoffSchedule = { firstMs: 2_000, maxMs: 60 * 60_000, giveUpAfterMs: 25 * 60 * 60_000 };

/**
 * The delay after `attempts` failed attempts (1 after the first), with "equal
 * jitter": uniformly within [d/2, d] of the exponential d, so retries of many
 * events that failed together spread out instead of returning in one burst,
 * and no delay is shorter than half the schedule's.
 */
export function retryDelay(schedule: BackoffSchedule, attempts: number, random: number = Math.random()): number {
  const exponent = Math.min(Math.max(attempts - 1, 0), 40);
  const full = Math.min(schedule.firstMs * 2 ** exponent, schedule.maxMs);
  return Math.round(full / 2 + (full / 2) * random);
}

/** After a failed attempt at `now`: the time of the next one, or null when the event is too old (give up). */
export function nextAttemptAt(schedule: BackoffSchedule, eventCreatedAt: number, attempts: number, now: number, random?: number): number | null {
  if (now - eventCreatedAt >= schedule.giveUpAfterMs) return null;
  return now + retryDelay(schedule, attempts, random);
}
