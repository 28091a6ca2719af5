// Rate limits over a sliding minute, from the counts of fixed minutes (issue
// 37). A fixed window admits its limit in the last second of one minute and
// again in the first of the next: 2,000 agent registrations in 8 s under a
// limit of 1,000 a minute. Here the previous minute still counts for the part
// of it the sliding minute ending now covers (its count weighted by that
// part, as if its requests were spread evenly): right after a boundary the
// whole previous minute counts, so its burst is not followed by another.
// Two counters per client, as the fixed windows already kept; both stores
// and the in-process limits use these functions.

export const MINUTE_MS = 60_000;

/** The start of the fixed window `now` falls in. */
export const windowStart = (now: number, windowMs = MINUTE_MS): number => now - (now % windowMs);

/** How much of the previous fixed window the sliding window ending at `now` still covers, in (0, 1]. */
export const previousWeight = (now: number, windowMs = MINUTE_MS): number => 1 - (now % windowMs) / windowMs;

/**
 * The previous window's requests the sliding window ending at `now` still
 * holds: its count weighted, to the nearest whole request. Right after a
 * boundary a burst of 3 a second ago is 3 (a fourth request is past a limit
 * of 3); a client keeping to its limit, one request a minute at 00:59 and
 * 01:59, carries 2/60 of a request: 0.
 */
export const carriedCount = (previous: number, weight: number): number => Math.round(previous * weight);

/** The requests in the sliding window ending at `now`, its current window's count included. */
export const slidingCount = (previous: number, current: number, now: number, windowMs = MINUTE_MS): number =>
  current + carriedCount(previous, previousWeight(now, windowMs));

/**
 * Whole seconds (at least 1) until one more request fits the limit, if
 * nothing else is counted meanwhile: later in this window when the previous
 * window's weight is what is over, else in the next one (where this
 * window's count is the previous one).
 */
export function retryAfterSeconds(previous: number, current: number, limit: number, now: number, windowMs = MINUTE_MS): number {
  const start = windowStart(now, windowMs);
  // One more here fits once current + 1 + round(previous · (1 − e)) ≤ limit, i.e. previous · (1 − e) < room + ½.
  const room = limit - current - 1;
  const at =
    room >= 0 && previous > 0
      ? start + windowMs * Math.max(0, 1 - (room + 0.5) / previous)
      : // In the next window: 1 + round(current · (1 − e)) ≤ limit.
        start + windowMs + windowMs * Math.max(0, 1 - (limit - 0.5) / current);
  // A millisecond past the instant itself, where the weighted count is exactly half a request over.
  return Math.max(1, Math.ceil((at + 1 - now) / 1000));
}

/**
 * The same limit kept in this process's memory (the keyless members route):
 * counts per client for the current and the previous minute. Every attempt
 * counts, refused ones too, so a client that keeps asking stays refused.
 */
export class SlidingWindows {
  private window = -1;
  private current = new Map<string, number>();
  private previous = new Map<string, number>();

  constructor(
    private readonly limit: number,
    private readonly now: () => number,
    private readonly windowMs = MINUTE_MS,
  ) {}

  /** Counts one request of `client`: null when admitted, else the seconds to wait. */
  hit(client: string): number | null {
    const now = this.now();
    const window = Math.floor(now / this.windowMs);
    if (window !== this.window) {
      this.previous = window === this.window + 1 ? this.current : new Map();
      this.current = new Map();
      this.window = window;
    }
    const current = (this.current.get(client) ?? 0) + 1;
    this.current.set(client, current);
    const previous = this.previous.get(client) ?? 0;
    if (slidingCount(previous, current, now, this.windowMs) <= this.limit) return null;
    return retryAfterSeconds(previous, current, this.limit, now, this.windowMs);
  }
}
