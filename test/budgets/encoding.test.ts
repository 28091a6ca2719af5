// The budget scheme's encodings and hashes (src/budgets/) against independent
// references: every Poseidon width against circomlibjs, the tagged values
// against a SHA-256 written here, the periods against the mandates' windows
// (src/mandates/period.ts) and against the calendar.
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { buildPoseidon } from "circomlibjs";
import fc from "fast-check";
import {
  budgetGroup,
  budgetMessage,
  currencyExponent,
  currencyField,
  MAX_AMOUNT,
  minorUnits,
  NOTES_GENESIS_LEAF,
  payeeField,
  periodsAt,
  serializeOrigin,
} from "../../src/budgets/encoding";
import { H1, H2, H3, H4, H5, H8 } from "../../src/budgets/hash";
import { FIELD_ORDER_R as R } from "../../src/identity/field";
import { periodStart } from "../../src/mandates/period";

const circomlib = await buildPoseidon();
const reference = (inputs: bigint[]): bigint => circomlib.F.toObject(circomlib(inputs));
const element = fc.bigInt({ min: 0n, max: R - 1n });

describe("Poseidon widths 1–5 and 8 equal circomlibjs", () => {
  test("at boundary values (0, 1, r − 1)", () => {
    for (const x of [0n, 1n, R - 1n]) {
      expect(H1(x)).toBe(reference([x]));
      expect(H2(x, R - 1n - x)).toBe(reference([x, R - 1n - x]));
      expect(H3(x, x, 1n)).toBe(reference([x, x, 1n]));
      expect(H4(x, 0n, x, 1n)).toBe(reference([x, 0n, x, 1n]));
      expect(H5(1n, x, 2n, x, 3n)).toBe(reference([1n, x, 2n, x, 3n]));
      expect(H8([x, 0n, 0n, 0n, 0n, 0n, 0n, x])).toBe(reference([x, 0n, 0n, 0n, 0n, 0n, 0n, x]));
    }
  });
  test("at random inputs", () => {
    fc.assert(
      fc.property(fc.array(element, { minLength: 8, maxLength: 8 }), (x) => {
        expect(H3(x[0]!, x[1]!, x[2]!)).toBe(reference(x.slice(0, 3)));
        expect(H5(x[0]!, x[1]!, x[2]!, x[3]!, x[4]!)).toBe(reference(x.slice(0, 5)));
        expect(H8(x)).toBe(reference(x));
      }),
      { numRuns: 8 },
    );
  });
  test("H8 takes exactly eight inputs", () => {
    expect(() => H8([1n])).toThrow(RangeError);
  });
});

/** The tagged value by hand: SHA-256 of the sorted-key JSON, first 31 bytes. */
const tagged = (object: Record<string, string>) => {
  const text = JSON.stringify(Object.fromEntries(Object.entries(object).sort(([a], [b]) => (a < b ? -1 : 1))));
  return BigInt(`0x${createHash("sha256").update(text).digest().subarray(0, 31).toString("hex")}`);
};

describe("tagged values", () => {
  test("group, payee, message and the notes genesis leaf are SHA-256 of their tagged canonical JSON, cut to 248 bits", () => {
    expect(budgetGroup("grp_1")).toBe(tagged({ group_id: "grp_1", tag: "zkagent/budget-group/v1" }));
    expect(payeeField("https://shop.example")).toBe(tagged({ origin: "https://shop.example", tag: "zkagent/payee/v1" }));
    expect(budgetMessage({ nonce: "ab", action: "purchase", context: { amount: "20.00", currency: "EUR" } })).toBe(
      tagged({ action: "purchase", context: '{"amount":"20.00","currency":"EUR"}', nonce: "ab", tag: "zkagent/budget-message/v1" }),
    );
    expect(budgetMessage({ nonce: "ab", action: "purchase", context: undefined })).toBe(
      tagged({ action: "purchase", context: "{}", nonce: "ab", tag: "zkagent/budget-message/v1" }),
    );
    expect(NOTES_GENESIS_LEAF).toBe(tagged({ tag: "zkagent/budget-notes/v1" }));
    expect(NOTES_GENESIS_LEAF).not.toBe(0n);
  });
  test("a payee is an origin in serialized form only: a path, an upper-case host or a default port is refused", () => {
    for (const bad of ["https://shop.example/", "https://SHOP.example", "https://shop.example:443", "shop.example", "ftp://shop.example"]) {
      expect(() => payeeField(bad)).toThrow(RangeError);
    }
    expect(serializeOrigin("https://SHOP.example:443/cart?x=1")).toEqual({ ok: true, value: "https://shop.example" });
    expect(serializeOrigin("http://localhost:8080/")).toEqual({ ok: true, value: "http://localhost:8080" });
    expect(serializeOrigin("data:text/plain,x").ok).toBe(false);
    expect(payeeField("https://a.example")).not.toBe(payeeField("https://b.example"));
  });
});

describe("currencies and amounts", () => {
  test("the currency field is the code's three ASCII bytes", () => {
    expect(currencyField("EUR")).toBe(4_543_826n);
    expect(currencyField("JPY")).toBe(0x4a5059n);
  });
  test("ISO 4217 exponents; codes without a minor unit and unknown codes are refused", () => {
    expect(currencyExponent("EUR")).toEqual({ ok: true, value: 2 });
    expect(currencyExponent("JPY")).toEqual({ ok: true, value: 0 });
    expect(currencyExponent("KWD")).toEqual({ ok: true, value: 3 });
    expect(currencyExponent("XAU").ok).toBe(false);
    expect(currencyExponent("QQQ").ok).toBe(false);
    expect(currencyExponent("eur").ok).toBe(false);
  });
  test("decimal text becomes exact minor units; too many decimals, signs and 2^64 are refused", () => {
    expect(minorUnits("20.00", "EUR")).toEqual({ ok: true, value: 2000n });
    expect(minorUnits("20", "EUR")).toEqual({ ok: true, value: 2000n });
    expect(minorUnits("0.5", "EUR")).toEqual({ ok: true, value: 50n });
    expect(minorUnits("20.000", "EUR")).toEqual({ ok: true, value: 2000n });
    expect(minorUnits(20.5, "EUR")).toEqual({ ok: true, value: 2050n });
    expect(minorUnits("1500", "JPY")).toEqual({ ok: true, value: 1500n });
    expect(minorUnits("1.234", "KWD")).toEqual({ ok: true, value: 1234n });
    expect(minorUnits("0.005", "EUR").ok).toBe(false);
    expect(minorUnits("1.5", "JPY").ok).toBe(false);
    expect(minorUnits("-5.00", "EUR").ok).toBe(false);
    expect(minorUnits(-5, "EUR").ok).toBe(false);
    expect(minorUnits("1e3", "EUR").ok).toBe(false);
    expect(minorUnits(1e21, "EUR").ok).toBe(false);
    expect(minorUnits((MAX_AMOUNT / 100n).toString(), "EUR")).toEqual({ ok: true, value: (MAX_AMOUNT / 100n) * 100n });
    expect(minorUnits(MAX_AMOUNT.toString(), "JPY")).toEqual({ ok: true, value: MAX_AMOUNT });
    expect(minorUnits((MAX_AMOUNT + 1n).toString(), "JPY").ok).toBe(false);
  });
});

describe("periods from one clock reading", () => {
  test("day, Monday week and month agree with the mandates' windows at every boundary", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), (ms) => {
        const p = periodsAt(ms);
        expect(p.day).toBe(BigInt(Math.floor(periodStart("day", ms) / 86_400_000)));
        // Week w starts on the Monday 7·w − 3 days after the epoch.
        expect(BigInt(periodStart("week", ms))).toBe((7n * p.week - 3n) * 86_400_000n);
        const month = new Date(periodStart("month", ms));
        expect(p.month).toBe(BigInt(12 * (month.getUTCFullYear() - 1970) + month.getUTCMonth()));
        expect(p.minute).toBe(BigInt(Math.floor(ms / 60_000)));
      }),
      { numRuns: 500 },
    );
  });
  test("known instants", () => {
    expect(periodsAt(0)).toEqual({ day: 0n, week: 0n, month: 0n, minute: 0n });
    // Monday 1970-01-05 00:00 starts week 1; the Sunday before is still week 0.
    expect(periodsAt(4 * 86_400_000).week).toBe(1n);
    expect(periodsAt(4 * 86_400_000 - 1).week).toBe(0n);
    const at = Date.UTC(2026, 10, 28, 23, 59, 59);
    expect(periodsAt(at).month).toBe(BigInt(12 * 56 + 10));
    expect(periodsAt(at + 1000).day).toBe(periodsAt(at).day + 1n);
  });
});
