// Budget terms from zkagent's own mandate JSON (src/budgets/terms-json.ts).
import { describe, expect, test } from "bun:test";
import { MAX_AMOUNT } from "../../src/budgets/encoding";
import { termsFromMandate } from "../../src/budgets/terms-json";

const now = Date.UTC(2026, 10, 28);
const mandate = {
  merchants: ["https://shop-a.example", "https://shop-b.example"],
  valid_until: "2027-01-01T00:00:00Z",
  limits: [{ currency: "EUR", max_amount: "30.00", max_total: "100.00", period: "day" }],
};

describe("zkagent mandate JSON as budget terms", () => {
  test("one limit becomes the terms, in minor units", () => {
    const result = termsFromMandate(mandate, { now, nonce: "n1" });
    if (!result.ok) throw new Error(result.error);
    expect(result.value).toMatchObject({ currency: "EUR", min: 0n, max: 3000n, budget: 10_000n, kind: "day", once: false, payees: mandate.merchants });
    expect(result.value.expiresAt).toBe(Date.UTC(2027, 0, 1) / 1000);
    const again = termsFromMandate(mandate, { now, nonce: "n2" });
    expect(again.ok && again.value.mandate).not.toBe(result.value.mandate);
  });
  test("without max_total: no cap beyond the per-purchase maximum, for the mandate's life; without merchants: any payee", () => {
    const result = termsFromMandate({ valid_until: "2027-01-01T00:00:00Z", limits: [{ currency: "JPY", max_amount: "5000" }] }, { now, nonce: "n" });
    expect(result.ok && result.value).toMatchObject({ max: 5000n, budget: MAX_AMOUNT, kind: "lifetime", payees: null });
  });
  test("what a spend cannot enforce is refused by name", () => {
    const refused = (value: unknown, reason: RegExp) => {
      const result = termsFromMandate(value, { now, nonce: "n" });
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error).toMatch(reason);
    };
    refused({ ...mandate, actions: ["purchase"] }, /actions cannot be enforced/);
    refused({ ...mandate, limits: [{ ...mandate.limits[0], max_count: 3 }] }, /max_count cannot be enforced/);
    refused({ ...mandate, limits: [{ ...mandate.limits[0], action: "purchase" }] }, /action cannot be enforced/);
    refused({ ...mandate, limits: [] }, /exactly one limit/);
    refused({ ...mandate, merchants: ["shop-a"] }, /merchants\[0\] must be an origin/);
    refused({ ...mandate, valid_until: undefined }, /valid_until is required/);
    refused({ ...mandate, valid_until: "2026-01-01T00:00:00Z" }, /in the past/);
    refused({ ...mandate, valid_from: "2026-12-01T00:00:00Z" }, /valid_from is in the future/);
    refused({ ...mandate, limits: [{ currency: "EUR", max_amount: "30.001" }] }, /more decimals/);
    refused({ ...mandate, limits: [{ currency: "XAU", max_amount: "30" }] }, /no minor unit/);
    refused({ ...mandate, limts: [] }, /unknown members limts/);
  });
});
