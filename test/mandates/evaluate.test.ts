// evaluateMandate at every boundary. Spend is supplied as the store would:
// the current totals for the keys spendKeys names, and the result's updates
// fed back in, as a committed verification would leave them.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { evaluateMandate, type Context, type MandateResult, type Spend, spendKeyId, spendKeys } from "../../src/mandates/evaluate";
import type { Mandate } from "../../src/mandates/schema";

const at = (iso: string) => Date.parse(iso);
const NOW = at("2026-11-21T12:00:00Z"); // a Saturday

/** A ledger that plays the store: checks and, when ok, commits. */
function ledger(mandate: Mandate) {
  const spend = new Map<string, Spend>();
  return {
    spend,
    attempt(action: string, context: Context, now = NOW): MandateResult {
      const keys = spendKeys(mandate, action, context, now);
      const visible = new Map(keys.map((key) => [spendKeyId(key), spend.get(spendKeyId(key)) ?? { total: "0", count: 0 }]));
      const result = evaluateMandate(mandate, action, context, now, visible);
      if (result.ok) for (const update of result.updates) spend.set(spendKeyId(update.key), update.spend);
      return result;
    },
  };
}

const violation = (result: MandateResult) => (result.ok ? "ok" : result.violation);
const purchase = (amount: unknown, extra: Context = {}): Context => ({ amount, currency: "EUR", merchant: "shop-a", ...extra });

const daily: Mandate = {
  limits: [{ action: "purchase", currency: "EUR", max_amount: "50.00", max_total: "100.00", period: "day" }],
};

describe("evaluateMandate", () => {
  test("amount = max_amount verifies; one cent more fails", () => {
    const book = ledger(daily);
    expect(violation(book.attempt("purchase", purchase("50.00")))).toBe("ok");
    expect(violation(book.attempt("purchase", purchase("50.01")))).toBe("max_amount");
    expect(violation(book.attempt("purchase", purchase(50.01)))).toBe("max_amount");
    expect(violation(book.attempt("purchase", purchase("50.000000000000000001")))).toBe("max_amount");
  });

  test("the verification that reaches max_total exactly verifies; the next, even of 0.01, fails", () => {
    const book = ledger(daily);
    for (const amount of ["20.00", "30.00", "49.99"]) expect(violation(book.attempt("purchase", purchase(amount)))).toBe("ok");
    expect(violation(book.attempt("purchase", purchase("0.02")))).toBe("max_total"); // 99.99 + 0.02
    expect(violation(book.attempt("purchase", purchase(0.01)))).toBe("ok"); // exactly 100.00
    expect([...book.spend.values()]).toEqual([{ total: "100.00", count: 4 }]);
    expect(violation(book.attempt("purchase", purchase("0.01")))).toBe("max_total");
    // A refused verification consumes nothing.
    expect([...book.spend.values()]).toEqual([{ total: "100.00", count: 4 }]);
  });

  test("floating point would get this wrong: ten times 0.1 reaches 1.0 exactly", () => {
    const book = ledger({ limits: [{ currency: "EUR", max_total: "1.0", period: "day" }] });
    for (let i = 0; i < 10; i++) expect(violation(book.attempt("purchase", purchase(0.1)))).toBe("ok");
    expect(violation(book.attempt("purchase", purchase(0)))).toBe("ok");
    expect(violation(book.attempt("purchase", purchase("0.000000000000000001")))).toBe("max_total");
  });

  test("max_count: the count-th verification passes, the next fails", () => {
    const book = ledger({ limits: [{ action: "purchase", max_count: 2, period: "day" }] });
    expect(violation(book.attempt("purchase", {}))).toBe("ok"); // count-only limits need no amount
    expect(violation(book.attempt("purchase", { amount: "999" }))).toBe("ok");
    expect(violation(book.attempt("purchase", {}))).toBe("max_count");
    expect(violation(book.attempt("refund", {}))).toBe("ok"); // another action is not counted
    expect(violation(ledger({ limits: [{ max_count: 0, period: "day" }] }).attempt("purchase", {}))).toBe("max_count");
  });

  test("periods roll over at 00:00 UTC, on Monday, and on the first of the month", () => {
    const cases: [Mandate["limits"], string, string, string][] = [
      [[{ currency: "EUR", max_total: "10", period: "day" }], "2026-11-21T00:00:00.000Z", "2026-11-21T23:59:59.999Z", "2026-11-22T00:00:00.000Z"],
      [[{ currency: "EUR", max_total: "10", period: "week" }], "2026-11-16T00:00:00.000Z", "2026-11-22T23:59:59.999Z", "2026-11-23T00:00:00.000Z"],
      [[{ currency: "EUR", max_total: "10", period: "month" }], "2026-11-01T00:00:00.000Z", "2026-11-30T23:59:59.999Z", "2026-12-01T00:00:00.000Z"],
    ];
    for (const [limits, first, last, next] of cases) {
      const book = ledger({ limits });
      expect(violation(book.attempt("purchase", purchase("10"), at(first)))).toBe("ok");
      expect(violation(book.attempt("purchase", purchase("0.01"), at(last)))).toBe("max_total");
      const fresh = book.attempt("purchase", purchase("10"), at(next));
      expect(fresh.ok && fresh.consumed).toEqual([{ limit: 0, period_start: next, amount: "10", currency: "EUR" }]);
      expect(violation(book.attempt("purchase", purchase("0.01"), at(next)))).toBe("max_total");
    }
  });

  test("actions and merchants are allow-lists", () => {
    const mandate: Mandate = { actions: ["purchase"], merchants: ["shop-a"] };
    expect(violation(evaluateMandate(mandate, "purchase", { merchant: "shop-a" }, NOW, new Map()))).toBe("ok");
    expect(violation(evaluateMandate(mandate, "refund", { merchant: "shop-a" }, NOW, new Map()))).toBe("action");
    expect(violation(evaluateMandate(mandate, "purchase", { merchant: "shop-b" }, NOW, new Map()))).toBe("merchant");
    expect(violation(evaluateMandate(mandate, "purchase", {}, NOW, new Map()))).toBe("merchant");
    expect(violation(evaluateMandate(mandate, "purchase", { merchant: ["shop-a"] }, NOW, new Map()))).toBe("merchant");
    expect(violation(evaluateMandate({ actions: [] }, "purchase", {}, NOW, new Map()))).toBe("action");
  });

  test("validity: valid_from inclusive, valid_until exclusive", () => {
    const mandate: Mandate = { valid_from: "2026-11-21T00:00:00Z", valid_until: "2026-12-21T00:00:00Z" };
    const check = (iso: string) => violation(evaluateMandate(mandate, "purchase", {}, at(iso), new Map()));
    expect(check("2026-11-20T23:59:59.999Z")).toBe("validity");
    expect(check("2026-11-21T00:00:00.000Z")).toBe("ok");
    expect(check("2026-12-20T23:59:59.999Z")).toBe("ok");
    expect(check("2026-12-21T00:00:00.000Z")).toBe("validity");
  });

  test("currency: an action with limits only in EUR asked in USD (or without a currency) is a violation", () => {
    expect(violation(evaluateMandate(daily, "purchase", purchase("1", { currency: "USD" }), NOW, new Map()))).toBe("currency");
    expect(violation(evaluateMandate(daily, "purchase", { amount: "1" }, NOW, new Map()))).toBe("currency");
    expect(violation(evaluateMandate(daily, "purchase", purchase("1", { currency: "eur" }), NOW, new Map()))).toBe("currency");
    // Actions without a limit are not restricted by it.
    expect(violation(evaluateMandate(daily, "refund", { currency: "USD" }, NOW, new Map()))).toBe("ok");
  });

  test("limits in two currencies: each request is held to the limits of its own currency", () => {
    const book = ledger({
      limits: [
        { action: "purchase", currency: "EUR", max_total: "100", period: "day" },
        { action: "purchase", currency: "USD", max_total: "10", period: "day" },
      ],
    });
    expect(violation(book.attempt("purchase", purchase("90")))).toBe("ok");
    expect(violation(book.attempt("purchase", purchase("10", { currency: "USD" })))).toBe("ok");
    expect(violation(book.attempt("purchase", purchase("0.01", { currency: "USD" })))).toBe("max_total");
    expect(violation(book.attempt("purchase", purchase("10")))).toBe("ok");
  });

  test("amount_missing: absent, malformed or negative amounts never pass a money limit", () => {
    for (const amount of [undefined, null, "", "ten", "-5.00", -5, "1e2", true, {}]) {
      expect(violation(evaluateMandate(daily, "purchase", purchase(amount), NOW, new Map()))).toBe("amount_missing");
    }
  });

  test("a limit without action covers every action; consumption names each limit by index", () => {
    const mandate: Mandate = {
      limits: [
        { currency: "EUR", max_total: "100", period: "month" },
        { action: "purchase", currency: "EUR", max_amount: "60" },
        { action: "purchase", max_count: 5, period: "week" },
      ],
    };
    const result = evaluateMandate(mandate, "purchase", purchase(20), NOW, new Map());
    expect(result).toEqual({
      ok: true,
      consumed: [
        { limit: 0, period_start: "2026-11-01T00:00:00.000Z", amount: "20", currency: "EUR" },
        { limit: 2, period_start: "2026-11-16T00:00:00.000Z", amount: null, currency: null },
      ],
      updates: [
        { key: { action: "", currency: "EUR", period: "month", periodStart: at("2026-11-01T00:00:00Z") }, spend: { total: "20", count: 1 } },
        { key: { action: "purchase", currency: "", period: "week", periodStart: at("2026-11-16T00:00:00Z") }, spend: { total: "0", count: 1 } },
      ],
    });
    const refund = evaluateMandate(mandate, "refund", purchase(20), NOW, new Map());
    expect(refund.ok && refund.consumed.map((c) => c.limit)).toEqual([0]);
  });

  test("constraints are reported in a fixed order", () => {
    const mandate: Mandate = { actions: ["purchase"], merchants: ["shop-a"], valid_until: "2026-01-01T00:00:00Z", limits: daily.limits };
    expect(violation(evaluateMandate(mandate, "refund", {}, NOW, new Map()))).toBe("action");
    expect(violation(evaluateMandate(mandate, "purchase", {}, NOW, new Map()))).toBe("merchant");
    expect(violation(evaluateMandate(mandate, "purchase", { merchant: "shop-a" }, NOW, new Map()))).toBe("validity");
    const open = { ...mandate, valid_until: undefined };
    expect(violation(evaluateMandate(open, "purchase", { merchant: "shop-a" }, NOW, new Map()))).toBe("currency");
    expect(violation(evaluateMandate(open, "purchase", { merchant: "shop-a", currency: "EUR" }, NOW, new Map()))).toBe("amount_missing");
  });

  test("spendKeys names each period total once, in a fixed order, and nothing when a check already fails", () => {
    const mandate: Mandate = {
      actions: ["purchase"],
      limits: [
        { action: "purchase", currency: "EUR", max_total: "100", period: "day" },
        { action: "purchase", currency: "EUR", max_count: 3, period: "day" },
        { currency: "EUR", max_total: "500", period: "month" },
      ],
    };
    const keys = spendKeys(mandate, "purchase", purchase("1"), NOW);
    expect(keys.map((key) => [key.action, key.period])).toEqual([
      ["", "month"],
      ["purchase", "day"],
    ]);
    expect(spendKeys(mandate, "refund", purchase("1"), NOW)).toEqual([]);
  });

  test("property: over any sequence of amounts, the total never passes max_total and a refusal means it would have (integer cents as the oracle)", () => {
    const cents = (n: bigint) => `${n / 100n}.${(n % 100n).toString().padStart(2, "0")}`;
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 100_000n }), fc.array(fc.bigInt({ min: 0n, max: 20_000n }), { maxLength: 40 }), (max, amounts) => {
        const book = ledger({ limits: [{ currency: "EUR", max_total: cents(max), period: "day" }] });
        let total = 0n;
        for (const amount of amounts) {
          const result = book.attempt("purchase", purchase(cents(amount)));
          if (total + amount <= max) {
            expect(result.ok).toBe(true);
            total += amount;
          } else {
            expect(violation(result)).toBe("max_total");
          }
        }
        const spent = [...book.spend.values()][0];
        expect(spent?.total ?? "0").toBe(spent ? cents(total) : "0");
      }),
    );
  });
});
