import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { addDecimal, compareDecimal, formatDecimal, parseAmount, parseDecimal, parseTotal } from "../../src/mandates/decimal";

const d = (text: string) => parseDecimal(text)!;

describe("decimal amounts", () => {
  test("plain decimal strings parse exactly; anything else is refused", () => {
    expect(parseDecimal("20.00")).toEqual({ units: 2000n, scale: 2 });
    expect(parseDecimal("0")).toEqual({ units: 0n, scale: 0 });
    expect(parseDecimal("0.05")).toEqual({ units: 5n, scale: 2 });
    for (const bad of ["", "-1", "+1", "01", "1.", ".5", "1e3", "1,00", " 1", "1 ", "NaN", "Infinity", "1.0000000000000000001", "1".repeat(31)]) {
      expect(parseDecimal(bad)).toBeNull();
    }
  });

  test("JSON numbers are read through their canonical text, exactly", () => {
    expect(parseAmount(20)).toEqual({ units: 20n, scale: 0 });
    expect(parseAmount(20.1)).toEqual({ units: 201n, scale: 1 });
    // 0.1 + 0.2 is the double 0.30000000000000004; its canonical text is that, not 0.3.
    expect(formatDecimal(parseAmount(0.1 + 0.2)!)).toBe("0.30000000000000004");
    expect(parseAmount(1e21)).toEqual({ units: 10n ** 21n, scale: 0 });
    expect(parseAmount(1.5e-7)).toEqual({ units: 15n, scale: 8 });
    for (const bad of [-1, -0.01, Number.NaN, Number.POSITIVE_INFINITY, null, undefined, true, {}, ["1"]]) expect(parseAmount(bad)).toBeNull();
  });

  test("comparison is exact where floating point is not", () => {
    expect(compareDecimal(d("50.00"), d("50"))).toBe(0);
    expect(compareDecimal(d("50.01"), d("50.00"))).toBe(1);
    expect(compareDecimal(d("49.999999999999999999"), d("50"))).toBe(-1);
    // As doubles these two are equal; as decimals they differ by one unit in the 18th place.
    expect(0.1 + 0.2 === 0.30000000000000004).toBe(true);
    expect(compareDecimal(addDecimal(d("0.1"), d("0.2")), d("0.3"))).toBe(0);
    expect(compareDecimal(d("100000000000000000000.01"), d("100000000000000000000"))).toBe(1);
  });

  test("sums keep the larger scale and format back to plain decimals", () => {
    expect(formatDecimal(addDecimal(d("20.00"), d("20.00")))).toBe("40.00");
    expect(formatDecimal(addDecimal(d("0"), d("0.05")))).toBe("0.05");
    expect(formatDecimal(addDecimal(d("99.99"), d("0.011")))).toBe("100.001");
    expect(formatDecimal(parseAmount(1.5e-7)!)).toBe("0.00000015");
  });

  test("format ∘ parse is the identity on amount strings, and addition matches integer cents (property)", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.bigInt({ min: 0n, max: 10n ** 20n }), (a, b) => {
        const text = (cents: bigint) => `${cents / 100n}.${(cents % 100n).toString().padStart(2, "0")}`;
        expect(formatDecimal(d(text(a)))).toBe(text(a));
        expect(formatDecimal(addDecimal(d(text(a)), d(text(b))))).toBe(text(a + b));
        expect(compareDecimal(d(text(a)), d(text(b)))).toBe(a < b ? -1 : a > b ? 1 : 0);
      }),
    );
  });

  test("stored totals beyond the amount-string bounds still parse; a corrupt one throws", () => {
    expect(parseTotal("0.0000000000000000000015")).toEqual({ units: 15n, scale: 22 });
    expect(() => parseTotal("12,5")).toThrow(/corrupt/);
  });
});
