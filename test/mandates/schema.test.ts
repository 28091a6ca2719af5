import { describe, expect, test } from "bun:test";
import { type Mandate, parseMandate, parseTimestamp } from "../../src/mandates/schema";

const example: Mandate = {
  actions: ["purchase", "refund"],
  merchants: ["shop-a", "shop-b"],
  valid_from: "2026-11-21T00:00:00Z",
  valid_until: "2026-12-21T00:00:00Z",
  limits: [{ action: "purchase", currency: "EUR", max_amount: "50.00", max_total: "100.00", max_count: 10, period: "day" }],
};

const error = (value: unknown) => {
  const parsed = parseMandate(value);
  if (parsed.ok) throw new Error("expected a refusal");
  return parsed.error;
};

describe("mandate schema", () => {
  test("the issue's example and the empty mandate are valid", () => {
    expect(parseMandate(example)).toEqual({ ok: true, value: example });
    expect(parseMandate({})).toEqual({ ok: true, value: {} });
  });

  test("unknown members are refused by name, at any depth, so a typo never widens a mandate", () => {
    expect(error({ ...example, merchant: ["shop-a"] })).toBe("unknown members merchant");
    expect(error({ limits: [{ currency: "EUR", max_totl: "10.00", max_amount: "5.00" }] })).toBe("unknown members limits[0].max_totl");
    expect(error({ foo: 1, limits: [{ max_count: 1, period: "day", bar: 2 }] })).toBe("unknown members foo, limits[0].bar");
  });

  test("amounts are decimal strings: numbers, signs, exponents and leading zeros are refused", () => {
    for (const bad of [50, "-5", "5e1", "050", "5.", "five"]) {
      expect(error({ limits: [{ currency: "EUR", max_amount: bad }] })).toStartWith("limits[0].max_amount must be a decimal string");
    }
  });

  test("currency, period, counts and texts are checked", () => {
    expect(error({ limits: [{ currency: "eur", max_amount: "1" }] })).toStartWith("limits[0].currency must be an ISO 4217 code");
    expect(error({ limits: [{ currency: "EURO", max_amount: "1" }] })).toStartWith("limits[0].currency must be an ISO 4217 code");
    expect(error({ limits: [{ max_count: 1, period: "year" }] })).toBe("limits[0].period must be day, week or month");
    expect(error({ limits: [{ max_count: 1.5, period: "day" }] })).toStartWith("limits[0].max_count must be an integer");
    expect(error({ limits: [{ max_count: -1, period: "day" }] })).toStartWith("limits[0].max_count must be an integer");
    expect(error({ actions: [""] })).toStartWith("actions[0]");
    expect(error({ actions: "purchase" })).toStartWith("actions");
    expect(error([])).toBe("must be a JSON object");
    expect(error(null)).toBe("must be a JSON object");
  });

  test("a limit must say what it limits, in which currency and over which period", () => {
    expect(error({ limits: [{ action: "purchase" }] })).toBe("limits[0] needs max_amount, max_total or max_count");
    expect(error({ limits: [{ max_amount: "5.00" }] })).toBe("limits[0] needs currency with max_amount or max_total");
    expect(error({ limits: [{ currency: "EUR", max_total: "5.00" }] })).toBe("limits[0] needs period (day, week or month) with max_total or max_count");
    expect(error({ limits: [{ max_count: 3 }] })).toBe("limits[0] needs period (day, week or month) with max_total or max_count");
    expect(error({ limits: [{ currency: "EUR", max_amount: "5.00", period: "day" }] })).toBe("limits[0].period applies only to max_total and max_count");
    expect(parseMandate({ limits: [{ max_count: 3, period: "week" }] }).ok).toBe(true);
  });

  test("validity bounds are RFC 3339 instants in order", () => {
    expect(error({ valid_from: "2026-12-21T00:00:00Z", valid_until: "2026-11-21T00:00:00Z" })).toBe("valid_from must be before valid_until");
    expect(error({ valid_from: "2026-11-21T00:00:00Z", valid_until: "2026-11-21T00:00:00Z" })).toBe("valid_from must be before valid_until");
    expect(error({ valid_until: "2026-02-30T00:00:00Z" })).toStartWith("valid_until must be an RFC 3339 date-time");
    expect(error({ valid_from: "21.11.2026" })).toStartWith("valid_from must be an RFC 3339 date-time");
  });

  test("timestamps: offsets, milliseconds, and no calendar roll-over", () => {
    expect(parseTimestamp("2026-11-21T01:00:00+01:00")).toBe(Date.UTC(2026, 10, 21));
    expect(parseTimestamp("2026-11-21T00:00:00.123Z")).toBe(Date.UTC(2026, 10, 21) + 123);
    expect(parseTimestamp("2028-02-29T00:00:00Z")).toBe(Date.UTC(2028, 1, 29));
    for (const bad of [
      "2026-02-29T00:00:00Z",
      "2026-11-21T24:00:00Z",
      "2026-11-21T00:00:00.1234Z",
      "2026-11-21 00:00:00Z",
      "2026-11-21T00:00:00",
      "2026-11-21T00:00:00+25:00",
    ]) {
      expect(parseTimestamp(bad)).toBeNull();
    }
  });
});
