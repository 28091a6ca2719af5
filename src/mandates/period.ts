// Budget periods are UTC calendar windows, a pure function of the time:
// a day starts at 00:00 UTC, a week on Monday 00:00 UTC (ISO 8601), a month
// on its first day at 00:00 UTC. Every node computes the same window for the
// same instant, whatever its local time zone, so the window is a safe part
// of a database key.

export const PERIODS = ["day", "week", "month"] as const;
export type Period = (typeof PERIODS)[number];

const DAY_MS = 86_400_000;

/** The start (Unix ms) of the period that contains `at`. */
export function periodStart(period: Period, at: number): number {
  const dayStart = Math.floor(at / DAY_MS) * DAY_MS;
  switch (period) {
    case "day":
      return dayStart;
    case "week": {
      // getUTCDay: Sunday 0 … Saturday 6; days since Monday: (day + 6) mod 7.
      const sinceMonday = (new Date(dayStart).getUTCDay() + 6) % 7;
      return dayStart - sinceMonday * DAY_MS;
    }
    case "month": {
      const date = new Date(at);
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
    }
  }
}

/** The start of the next period: when the current one's totals stop counting. */
export function periodEnd(period: Period, at: number): number {
  const start = periodStart(period, at);
  switch (period) {
    case "day":
      return start + DAY_MS;
    case "week":
      return start + 7 * DAY_MS;
    case "month": {
      const date = new Date(start);
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
    }
  }
}
