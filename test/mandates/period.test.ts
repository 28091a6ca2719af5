import { describe, expect, test } from "bun:test";
import { periodEnd, periodStart } from "../../src/mandates/period";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

describe("UTC calendar periods", () => {
  test("a day runs from 00:00:00.000 UTC to the next; the last millisecond still belongs to it", () => {
    expect(iso(periodStart("day", at("2026-11-21T23:59:59.999Z")))).toBe("2026-11-21T00:00:00.000Z");
    expect(iso(periodStart("day", at("2026-11-22T00:00:00.000Z")))).toBe("2026-11-22T00:00:00.000Z");
    expect(iso(periodEnd("day", at("2026-11-21T12:00:00Z")))).toBe("2026-11-22T00:00:00.000Z");
  });

  test("a week starts on Monday 00:00 UTC, from every day of the week", () => {
    // 2026-11-16 is a Monday.
    for (let day = 16; day <= 22; day++) {
      expect(iso(periodStart("week", at(`2026-11-${day}T13:14:15Z`)))).toBe("2026-11-16T00:00:00.000Z");
    }
    expect(iso(periodStart("week", at("2026-11-22T23:59:59.999Z")))).toBe("2026-11-16T00:00:00.000Z"); // Sunday's end
    expect(iso(periodStart("week", at("2026-11-23T00:00:00.000Z")))).toBe("2026-11-23T00:00:00.000Z"); // Monday
    expect(iso(periodStart("week", at("2027-01-01T00:00:00Z")))).toBe("2026-12-28T00:00:00.000Z"); // across a year
    expect(iso(periodEnd("week", at("2026-11-18T00:00:00Z")))).toBe("2026-11-23T00:00:00.000Z");
  });

  test("a month starts on the first at 00:00 UTC, with month lengths and leap years", () => {
    expect(iso(periodStart("month", at("2026-11-30T23:59:59.999Z")))).toBe("2026-11-01T00:00:00.000Z");
    expect(iso(periodStart("month", at("2026-12-01T00:00:00.000Z")))).toBe("2026-12-01T00:00:00.000Z");
    expect(iso(periodEnd("month", at("2028-02-10T00:00:00Z")))).toBe("2028-03-01T00:00:00.000Z");
    expect(iso(periodStart("month", at("2028-02-29T12:00:00Z")))).toBe("2028-02-01T00:00:00.000Z");
    expect(iso(periodEnd("month", at("2026-12-31T23:59:59.999Z")))).toBe("2027-01-01T00:00:00.000Z");
  });

  test("the machine's time zone plays no part", () => {
    const saved = process.env.TZ;
    process.env.TZ = "America/New_York"; // Bun applies TZ changes at run time
    try {
      const instant = at("2026-11-23T00:30:00Z"); // Monday in UTC, Sunday evening in New York
      expect(new Date(instant).getDay()).toBe(0); // the local calendar really is elsewhere
      expect(iso(periodStart("week", instant))).toBe("2026-11-23T00:00:00.000Z");
      expect(iso(periodStart("day", instant))).toBe("2026-11-23T00:00:00.000Z");
      expect(iso(periodStart("month", at("2026-12-01T01:00:00Z")))).toBe("2026-12-01T00:00:00.000Z");
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });
});
