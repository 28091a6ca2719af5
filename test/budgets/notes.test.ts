// Terms packing, the leaf, chains, notes and nullifiers (src/budgets/terms.ts,
// notes.ts): unpacked by hand at the circuit's widths, recomputed with
// circomlibjs, and the chain rules the soundness argument rests on.
import { describe, expect, test } from "bun:test";
import { buildPoseidon } from "circomlibjs";
import { budgetGroup, currencyField, MAX_AMOUNT, payeeField, periodsAt } from "../../src/budgets/encoding";
import { chainOf, nextRho, noteCommitment, noteNullifier, spendOutputs, startNullifier } from "../../src/budgets/notes";
import { type BudgetTerms, budgetLeaf, packTerms, termsProblem } from "../../src/budgets/terms";

const circomlib = await buildPoseidon();
const P = (inputs: bigint[]): bigint => circomlib.F.toObject(circomlib(inputs));

const terms: BudgetTerms = {
  currency: "EUR",
  min: 1n,
  max: 3000n,
  budget: 10_000n,
  kind: "day",
  once: false,
  payees: ["https://b.example", "https://a.example"],
  expiresAt: Date.UTC(2027, 0, 1) / 1000,
  mandate: 12345n,
};
const mask = (bits: bigint) => (1n << bits) - 1n;

describe("packing", () => {
  test("TA and TM unpack at the circuit's widths into the terms", () => {
    const packed = packTerms(terms);
    expect(packed.TA & mask(64n)).toBe(3000n);
    expect((packed.TA >> 64n) & mask(64n)).toBe(10_000n);
    expect(packed.TA >> 128n).toBe(1n);
    expect(packed.TM & mask(24n)).toBe(currencyField("EUR"));
    expect((packed.TM >> 24n) & 3n).toBe(1n); // day
    expect((packed.TM >> 26n) & 1n).toBe(0n);
    expect((packed.TM >> 27n) & 1n).toBe(0n);
    expect(packed.TM >> 28n).toBe(BigInt(Date.UTC(2027, 0, 1) / 60_000));
    expect(packed.TA < 1n << 192n && packed.TM < 1n << 68n).toBe(true);
  });
  test("payees are sorted and 0-padded whatever their order; TQ, T and the leaf equal circomlibjs", () => {
    const packed = packTerms(terms);
    const a = payeeField("https://a.example");
    const b = payeeField("https://b.example");
    const [low, high] = [a, b].sort((x, y) => (x < y ? -1 : 1));
    expect(packed.payees).toEqual([low, high, 0n, 0n, 0n, 0n, 0n, 0n]);
    expect(packTerms({ ...terms, payees: ["https://a.example", "https://b.example"] }).hash).toBe(packed.hash);
    expect(packed.TQ).toBe(P(packed.payees));
    expect(packed.hash).toBe(P([packed.TA, packed.TM, packed.TQ, 12345n]));
    expect(budgetLeaf(7n, packed.hash, 99n)).toBe(P([7n, packed.hash, 99n]));
  });
  test("any payee sets the flag and leaves every slot 0", () => {
    const packed = packTerms({ ...terms, payees: null });
    expect((packed.TM >> 27n) & 1n).toBe(1n);
    expect(packed.payees).toEqual(Array(8).fill(0n));
  });
  test("every term changes the leaf's terms hash", () => {
    const base = packTerms(terms).hash;
    const variants: Partial<BudgetTerms>[] = [
      { currency: "USD" },
      { min: 2n },
      { max: 3001n },
      { budget: 10_001n },
      { kind: "week" },
      { payees: ["https://a.example"] },
      { payees: null },
      { expiresAt: terms.expiresAt + 60 },
      { mandate: 12346n },
    ];
    for (const v of variants) expect(packTerms({ ...terms, ...v }).hash).not.toBe(base);
    expect(packTerms({ ...terms, kind: "lifetime", once: true }).hash).not.toBe(packTerms({ ...terms, kind: "lifetime" }).hash);
  });
  test("terms the circuit cannot hold are refused with the reason", () => {
    expect(termsProblem({ ...terms, min: 3001n })).toContain("min");
    expect(termsProblem({ ...terms, max: MAX_AMOUNT + 1n })).toContain("max");
    expect(termsProblem({ ...terms, budget: 0n })).toContain("budget");
    expect(termsProblem({ ...terms, once: true })).toContain("one-time");
    expect(termsProblem({ ...terms, payees: Array.from({ length: 9 }, (_, i) => `https://s${i}.example`) })).toContain("at most 8");
    expect(termsProblem({ ...terms, payees: ["https://a.example/"] })).toContain("origin");
    expect(termsProblem({ ...terms, payees: ["https://a.example", "https://a.example"] })).toContain("repeat");
    expect(termsProblem({ ...terms, currency: "XAU" })).toContain("currency");
    expect(termsProblem(terms)).toBeNull();
    expect(() => packTerms({ ...terms, min: 3001n })).toThrow(RangeError);
  });
});

describe("chains, notes and nullifiers", () => {
  const g = budgetGroup("grp_1");
  const c = currencyField("EUR");
  const day = periodsAt(Date.UTC(2026, 10, 28, 12));
  const nextDay = periodsAt(Date.UTC(2026, 10, 29, 12));
  const s = 424242n;

  test("the chain is H5(1, g, c, kind·2^40 + P, τ') as circomlibjs computes it", () => {
    expect(chainOf(g, c, "day", day, 9n)).toBe(P([1n, g, c, (1n << 40n) + day.day, 0n]));
    expect(chainOf(g, c, "month", day, 9n)).toBe(P([1n, g, c, (3n << 40n) + day.month, 0n]));
    expect(chainOf(g, c, "lifetime", day, 9n)).toBe(P([1n, g, c, 0n, 9n]));
  });
  test("a recurring chain is one per period and ignores the mandate; a lifetime chain is one per mandate and ignores the period", () => {
    expect(chainOf(g, c, "day", day, 1n)).toBe(chainOf(g, c, "day", day, 2n));
    expect(chainOf(g, c, "day", day, 1n)).not.toBe(chainOf(g, c, "day", nextDay, 1n));
    expect(chainOf(g, c, "day", day, 1n)).not.toBe(chainOf(g, c, "week", day, 1n));
    expect(chainOf(g, c, "lifetime", day, 1n)).toBe(chainOf(g, c, "lifetime", nextDay, 1n));
    expect(chainOf(g, c, "lifetime", day, 1n)).not.toBe(chainOf(g, c, "lifetime", day, 2n));
    expect(chainOf(g, c, "day", day, 1n)).not.toBe(chainOf(budgetGroup("grp_2"), c, "day", day, 1n));
  });
  test("note, nullifiers and ρ_new equal circomlibjs, with distinct tags", () => {
    const chi = chainOf(g, c, "day", day, 0n);
    expect(noteCommitment(s, chi, 2000n, 77n)).toBe(P([2n, s, chi, 2000n, 77n]));
    expect(startNullifier(s, chi)).toBe(P([3n, s, chi]));
    expect(noteNullifier(s, 77n)).toBe(P([4n, s, 77n]));
    expect(nextRho(s, 5n)).toBe(P([5n, s, 5n]));
    expect(startNullifier(s, chi)).not.toBe(noteNullifier(s, chi));
  });
  test("a chain of spends: each consumes the previous output's nullifier and carries the running total", () => {
    const chi = chainOf(g, c, "day", day, 0n);
    const first = spendOutputs(s, chi, null, 2000n);
    expect(first.nullifier).toBe(startNullifier(s, chi));
    expect(first.next).toEqual({ chain: chi, spent: 2000n, rho: nextRho(s, first.nullifier) });
    expect(first.commitment).toBe(noteCommitment(s, chi, 2000n, first.next.rho));
    const second = spendOutputs(s, chi, first.next, 500n);
    expect(second.nullifier).toBe(noteNullifier(s, first.next.rho));
    expect(second.next.spent).toBe(2500n);
    // Recomputing from the secret gives the same outputs: a lost answer is recovered, never re-spent as new.
    expect(spendOutputs(s, chi, first.next, 500n)).toEqual(second);
    // Nothing spend 2 reveals equals what spend 1 revealed.
    expect([second.nullifier, second.commitment]).not.toContain(first.commitment);
    expect([second.nullifier, second.commitment]).not.toContain(first.nullifier);
    expect(() => spendOutputs(s, chainOf(g, c, "day", nextDay, 0n), first.next, 1n)).toThrow(RangeError);
  });
});
