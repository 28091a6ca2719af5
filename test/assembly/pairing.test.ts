// Algebraic properties of the tower, the pairing and G2 membership, with
// random points built by the BigInt twin (independent of the wasm curve code).
import { beforeAll, describe, expect, test } from "bun:test";
import * as S from "./support.ts";

let w: S.TestExports;
beforeAll(async () => {
  w = await S.newWasm();
}, 60_000); // may build the wasm on first use

type F12 = bigint[]; // 12 Fp coefficients in memory order
const F12_BYTES = 384;
const f12Bytes = (a: F12) => S.concat(...a.map(S.toBytes32));
const f12From = (b: Uint8Array): F12 => Array.from({ length: 12 }, (_, i) => S.fromBytes(b.subarray(32 * i, 32 * i + 32)));
const ONE: F12 = [1n, ...Array(11).fill(0n)];
const randomF12 = (): F12 => Array.from({ length: 12 }, () => S.randomBelow(S.P));
const expBytes = (e: bigint) => S.hexToBytes(e.toString(16).padStart(Math.ceil(e.toString(16).length / 2) * 2, "0"));

function f12(op: number, a: F12, b: F12 = ONE, e?: bigint): F12 {
  const exp = e === undefined ? new Uint8Array(0) : expBytes(e);
  const r = S.call(w, S.concat(f12Bytes(a), f12Bytes(b), new Uint8Array(F12_BYTES), exp), 0, () => w.fp12Op(op, exp.length));
  expect(r.status).toBe(0);
  return f12From(r.io.subarray(2 * F12_BYTES, 3 * F12_BYTES));
}
const mul = (a: F12, b: F12) => f12(0, a, b);
const pow = (a: F12, e: bigint) => f12(10, a, ONE, e);
const finalExp = (a: F12) => f12(7, a);

function pairing(p: S.G1, q: S.G2): F12 {
  const r = S.call(w, S.concat(S.g1Bytes(p), S.g2Bytes(q)), F12_BYTES, () => w.pairing());
  expect(r.status).toBe(0);
  return f12From(r.io.subarray(192, 192 + F12_BYTES));
}

describe("Fp12 tower", () => {
  test("Frobenius maps equal powers by p, p², p³", () => {
    const f = randomF12();
    expect(f12(2, f)).toEqual(pow(f, S.P));
    expect(f12(3, f)).toEqual(pow(f, S.P ** 2n));
    expect(f12(4, f)).toEqual(pow(f, S.P ** 3n));
  }, 30_000);
  test("inverse and squaring agree with multiplication", () => {
    const f = randomF12();
    expect(mul(f, f12(5, f))).toEqual(ONE);
    expect(f12(1, f)).toEqual(mul(f, f));
  }, 30_000);
  test("final exponentiation equals f^((p¹²−1)/r) and lands in μ_r", () => {
    const f = randomF12();
    const g = finalExp(f);
    expect(g).toEqual(pow(f, (S.P ** 12n - 1n) / S.R));
    expect(pow(g, S.R)).toEqual(ONE);
    expect(g).not.toEqual(ONE);
  }, 30_000);
  test("final exponentiation is a homomorphism", () => {
    const f = randomF12();
    const g = randomF12();
    expect(finalExp(mul(f, g))).toEqual(mul(finalExp(f), finalExp(g)));
  }, 30_000);
  test("cyclotomic squaring, conjugate-inverse and ^u agree on the cyclotomic subgroup", () => {
    const g = finalExp(randomF12());
    expect(f12(6, g)).toEqual(f12(1, g));
    expect(mul(g, f12(8, g))).toEqual(ONE); // conjugation inverts
    expect(f12(9, g)).toEqual(pow(g, 4965661367192848881n));
  }, 30_000);
});

describe("optimal ate pairing", () => {
  test("bilinearity: e(aP, bQ) = e(P, Q)^(ab)", () => {
    const a = S.randomBelow(S.R);
    const b = S.randomBelow(S.R);
    const base = pairing(S.G1_GEN, S.G2_GEN);
    expect(pairing(S.g1Mul(S.G1_GEN, a), S.g2Mul(S.G2_GEN, b))).toEqual(pow(base, (a * b) % S.R));
  }, 30_000);
  test("linearity in each argument", () => {
    const p = S.g1Mul(S.G1_GEN, S.randomBelow(S.R));
    const q1 = S.g2Mul(S.G2_GEN, S.randomBelow(S.R));
    const q2 = S.g2Mul(S.G2_GEN, S.randomBelow(S.R));
    expect(pairing(p, S.g2Add(q1, q2))).toEqual(mul(pairing(p, q1), pairing(p, q2)));
    const p2 = S.g1Mul(S.G1_GEN, 7n);
    expect(pairing(S.g1Add(p, p2), q1)).toEqual(mul(pairing(p, q1), pairing(p2, q1)));
  }, 30_000);
  test("e(P, Q)^r = 1 and non-degeneracy e(G1, G2) ≠ 1", () => {
    const e = pairing(S.G1_GEN, S.G2_GEN);
    expect(e).not.toEqual(ONE);
    expect(pow(e, S.R)).toEqual(ONE);
    const e2 = pairing(S.g1Mul(S.G1_GEN, S.randomBelow(S.R)), S.G2_GEN);
    expect(pow(e2, S.R)).toEqual(ONE);
  }, 30_000);
  test("pairing check: e(P, Q)·e(−P, Q) = 1, e(P, Q)·e(P, Q) ≠ 1", () => {
    const p = S.g1Mul(S.G1_GEN, S.randomBelow(S.R))!;
    const q = S.g2Mul(S.G2_GEN, S.randomBelow(S.R));
    const neg = { x: p.x, y: S.mod(-p.y) };
    const ok = S.concat(S.g1Bytes(p), S.g2Bytes(q), S.g1Bytes(neg), S.g2Bytes(q));
    expect(S.call(w, ok, 0, () => w.pairingCheck(2)).status).toBe(1);
    const bad = S.concat(S.g1Bytes(p), S.g2Bytes(q), S.g1Bytes(p), S.g2Bytes(q));
    expect(S.call(w, bad, 0, () => w.pairingCheck(2)).status).toBe(0);
  }, 30_000);
});

describe("G2 subgroup membership (ψ-based check vs naive [r]Q = O)", () => {
  const check = (q: { x: S.F2; y: S.F2 }) => {
    const bytes = S.g2Bytes(q);
    const fast = S.call(w, bytes, 0, () => w.g2Op(0)).status;
    const naive = S.call(w, bytes, 0, () => w.g2Op(1)).status;
    return { fast, naive };
  };
  test("points of G2 pass both checks", () => {
    for (let i = 0; i < 4; i++) {
      const q = S.g2Mul(S.G2_GEN, S.randomBelow(S.R))!;
      expect(check(q)).toEqual({ fast: 1, naive: 1 });
    }
    expect(check(S.G2_GEN!)).toEqual({ fast: 1, naive: 1 });
  }, 30_000);
  test("twist points hashed to the curve without cofactor clearing fail both checks", () => {
    for (let seed = 1n; seed <= 6n; seed++) {
      const t = S.twistPointFromSeed(seed);
      expect(S.g2OnCurve(t)).toBe(true);
      expect(check(t)).toEqual({ fast: 0, naive: 0 });
      // and the full decoder reports "not in subgroup" (DECODE_NOT_IN_SUBGROUP = 4)
      expect(S.call(w, S.g2Bytes(t), 0, () => w.g2Op(3)).status).toBe(4);
    }
  }, 30_000);
  test("points of the cofactor part, and G2 + cofactor torsion, fail both checks", () => {
    const t = S.twistPointFromSeed(42n);
    // [r]T is killed by the cofactor but not by r (unless trivial)
    const r = S.call(w, S.concat(S.g2Bytes(t), S.toBytes32(S.R)), 128, () => w.g2Op(2));
    expect(r.status).toBe(0);
    const torsion = r.io.subarray(160, 288);
    expect(torsion.some((b) => b !== 0)).toBe(true);
    const tor = { x: S.f2FromBytes(torsion.subarray(0, 64)), y: S.f2FromBytes(torsion.subarray(64, 128)) };
    expect(check(tor)).toEqual({ fast: 0, naive: 0 });
    const mixed = S.g2Add(S.G2_GEN, tor)!;
    expect(check(mixed)).toEqual({ fast: 0, naive: 0 });
  }, 30_000);
});
