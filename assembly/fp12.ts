// Fp12 = Fp6[w]/(w² − v). An element c0 + c1·w is stored as two Fp6
// (FP12_C0, FP12_C1). Equivalently Fp12 = Fp2[w]/(w⁶ − ξ) with
//   f = z0 + z1·w + z2·w² + z3·w³ + z4·w⁴ + z5·w⁵,
//   z0 = c0.b0, z1 = c1.b0, z2 = c0.b1, z3 = c1.b1, z4 = c0.b2, z5 = c1.b2,
// the view used by the Frobenius map and by cyclotomic squaring.

import {
  fp2Add, fp2Mul, fp2SetOne, fp2AddLazy, fp2Sub2, fp2SubSubXi, fp2AddXi, fp2CycRe, fp2CycIm, fp2CycXiIm,
} from "./fp2";
import {
  FP6_SIZE, FP6_B0, FP6_B1, FP6_B2, fp6Add, fp6Sub, fp6Mul, fp6MulByV, fp6MulBy01,
  fp6MulByFp2, fp6Neg, fp6Copy, fp6SetZero, fp6SetOne, fp6Eq, fp6Sqr, fp6Inv, fp6AddLazy,
} from "./fp6";
import { U_WNAF, U_WNAF_LEN } from "./constants";
import { FP2_SIZE } from "./fp2";

export const FP12_C0: usize = 0;
export const FP12_C1: usize = FP6_SIZE;
export const FP12_SIZE: usize = 2 * FP6_SIZE;

// Coefficient z_i of the Fp2[w]/(w⁶ − ξ) view (see header).
export const Z0: usize = FP12_C0 + FP6_B0;
export const Z1: usize = FP12_C1 + FP6_B0;
export const Z2: usize = FP12_C0 + FP6_B1;
export const Z3: usize = FP12_C1 + FP6_B1;
export const Z4: usize = FP12_C0 + FP6_B2;
export const Z5: usize = FP12_C1 + FP6_B2;

const A0: usize = memory.data(<i32>FP6_SIZE, 4);
const A1: usize = memory.data(<i32>FP6_SIZE, 4);
const A2: usize = memory.data(<i32>FP6_SIZE, 4);
const LB: usize = memory.data(<i32>FP2_SIZE, 4);

export function fp12Copy(out: usize, a: usize): void {
  memory.copy(out, a, FP12_SIZE);
}
export function fp12SetOne(out: usize): void {
  fp6SetOne(out + FP12_C0);
  fp6SetZero(out + FP12_C1);
}
export function fp12Eq(a: usize, b: usize): bool {
  return fp6Eq(a + FP12_C0, b + FP12_C0) && fp6Eq(a + FP12_C1, b + FP12_C1);
}
const ONE12: usize = memory.data(<i32>FP12_SIZE, 4);
let oneReady = false;
export function fp12IsOne(a: usize): bool {
  if (!oneReady) {
    fp12SetOne(ONE12);
    oneReady = true;
  }
  return fp12Eq(a, ONE12);
}

/** out = c0 − c1·w: the p⁶-power Frobenius, i.e. the inverse on the cyclotomic subgroup. */
export function fp12Conj(out: usize, a: usize): void {
  fp6Copy(out + FP12_C0, a + FP12_C0);
  fp6Neg(out + FP12_C1, a + FP12_C1);
}

/** out = a·b, Karatsuba over Fp6: 3 Fp6 multiplications (18 Fp2). */
export function fp12Mul(out: usize, a: usize, b: usize): void {
  fp6Mul(A0, a + FP12_C0, b + FP12_C0); // t0 = a0b0
  fp6Mul(A1, a + FP12_C1, b + FP12_C1); // t1 = a1b1
  fp6AddLazy(A2, a + FP12_C0, a + FP12_C1);
  fp6AddLazy(out + FP12_C1, b + FP12_C0, b + FP12_C1); // (b may alias out: b is no longer read)
  fp6Mul(out + FP12_C1, out + FP12_C1, A2); // (a0 + a1)(b0 + b1)
  sub2Fp6(out + FP12_C1, out + FP12_C1, A0, A1); // c1 = a0b1 + a1b0
  addMulByV(out + FP12_C0, A0, A1); // c0 = t0 + v·t1
}

/** out = t − u − w in Fp6, one fused pass per Fp2 coefficient. */
function sub2Fp6(out: usize, t: usize, u: usize, w: usize): void {
  fp2Sub2(out + FP6_B0, t + FP6_B0, u + FP6_B0, w + FP6_B0);
  fp2Sub2(out + FP6_B1, t + FP6_B1, u + FP6_B1, w + FP6_B1);
  fp2Sub2(out + FP6_B2, t + FP6_B2, u + FP6_B2, w + FP6_B2);
}

/** out = a + v·b in Fp6: v·(b0, b1, b2) = (ξ·b2, b0, b1). out may alias a, not b. */
function addMulByV(out: usize, a: usize, b: usize): void {
  fp2AddXi(out + FP6_B0, a + FP6_B0, b + FP6_B2);
  fp2Add(out + FP6_B1, a + FP6_B1, b + FP6_B0);
  fp2Add(out + FP6_B2, a + FP6_B2, b + FP6_B1);
}

/**
 * out = a², complex squaring (Devegili, Ó hÉigeartaigh, Scott, Dahab 2006,
 * §3, the "complex" method for quadratic extensions): 2 Fp6 multiplications.
 */
export function fp12Sqr(out: usize, a: usize): void {
  fp6Mul(A0, a + FP12_C0, a + FP12_C1); // t = c0·c1
  fp6MulByV(A1, a + FP12_C1);
  fp6AddLazy(A1, A1, a + FP12_C0); // c0 + v·c1 (lazy: only multiplied)
  fp6AddLazy(A2, a + FP12_C0, a + FP12_C1); // c0 + c1
  fp6Mul(A2, A2, A1); // (c0 + c1)(c0 + v·c1) = c0² + v·c1² + (1 + v)·t
  // c0² + v·c1² = A2 − t − v·t, v·t = (ξ·t2, t0, t1)
  fp2SubSubXi(out + FP12_C0 + FP6_B0, A2 + FP6_B0, A0 + FP6_B0, A0 + FP6_B2);
  fp2Sub2(out + FP12_C0 + FP6_B1, A2 + FP6_B1, A0 + FP6_B1, A0 + FP6_B0);
  fp2Sub2(out + FP12_C0 + FP6_B2, A2 + FP6_B2, A0 + FP6_B2, A0 + FP6_B1);
  fp6Add(out + FP12_C1, A0, A0); // 2·c0·c1
}

/** out = a⁻¹ = (c0 − c1·w) / (c0² − v·c1²). */
export function fp12Inv(out: usize, a: usize): void {
  fp6Sqr(A0, a + FP12_C0);
  fp6Sqr(A1, a + FP12_C1);
  fp6MulByV(A1, A1);
  fp6Sub(A0, A0, A1);
  fp6Inv(A0, A0);
  fp6Mul(out + FP12_C0, a + FP12_C0, A0);
  fp6Mul(A1, a + FP12_C1, A0);
  fp6Neg(out + FP12_C1, A1);
}

/**
 * f = f·(a + b·w + c·v·w): multiplication by a line value, which is sparse
 * (coefficients z0, z1, z3 only: "034" in gnark-crypto's flat indexing).
 * 13 Fp2 multiplications instead of 18.
 */
export function fp12MulBy034(f: usize, a: usize, b: usize, c: usize): void {
  fp6MulByFp2(A0, f + FP12_C0, a); // t0 = c0·a
  fp6MulBy01(A1, f + FP12_C1, b, c); // t1 = c1·(b + c·v)
  fp6AddLazy(A2, f + FP12_C0, f + FP12_C1);
  fp2AddLazy(LB, a, b);
  fp6MulBy01(A2, A2, LB, c); // (c0 + c1)(a + b + c·v)
  sub2Fp6(f + FP12_C1, A2, A0, A1); // c1' = c0·(b + cv) + c1·a
  addMulByV(f + FP12_C0, A0, A1); // c0' = c0·a + v·c1·(b + cv)
}

/** As fp12MulBy034 with a = 1 (lines normalised by 1/y_P): 10 Fp2 multiplications. */
export function fp12MulBy034One(f: usize, b: usize, c: usize): void {
  fp6MulBy01(A1, f + FP12_C1, b, c); // t1 = c1·(b + c·v)
  fp6AddLazy(A2, f + FP12_C0, f + FP12_C1);
  fp2SetOne(LB);
  fp2AddLazy(LB, LB, b);
  fp6MulBy01(A2, A2, LB, c); // (c0 + c1)(1 + b + c·v)
  sub2Fp6(f + FP12_C1, A2, f + FP12_C0, A1); // c1' = c0·(b + cv) + c1
  addMulByV(f + FP12_C0, f + FP12_C0, A1); // c0' = c0 + v·c1·(b + cv)
}

// --- cyclotomic subgroup -------------------------------------------------------

const CS: usize = memory.data(<i32>FP12_SIZE, 4);
const CT: usize = memory.data(<i32>FP2_SIZE, 4);
const CU: usize = memory.data(<i32>FP2_SIZE, 4);
const XS: usize = memory.data(<i32>FP2_SIZE, 4);
const XQ: usize = memory.data(<i32>FP2_SIZE, 4);

/**
 * (t, u) for the square of x + y·s in Fp4 = Fp2[s]/(s² − ξ) from two Fp2
 * multiplications instead of three squarings (with SIMD products a
 * multiplication costs less than 1.5 squarings): u = x·y and
 * t = (x + y)(x + ξy) = x² + ξy² + (1 + ξ)·u, so the square is
 * (t − u − ξu) + 2u·s; the fused forms fp2CycRe/fp2CycIm/fp2CycXiIm apply
 * that together with the 3·(…) ∓ 2·z of the squaring formula.
 */
function fp4SqrParts(t: usize, u: usize, x: usize, y: usize): void {
  fp2Mul(u, x, y);
  fp2AddLazy(XS, x, y); // < 2p: only multiplied
  fp2AddXi(XQ, x, y);
  fp2Mul(t, XS, XQ);
}

/**
 * out = a² for a in the cyclotomic subgroup G_{Φ6(p²)} (after the easy part
 * of the final exponentiation). Granger–Scott 2010, "Faster squaring in the
 * cyclotomic subgroup of sixth degree extensions", §3.1: writing
 * Fp12 = Fp4[w]/(w³ − s), f = A + B·w + C·w² with A = z0 + z3·s,
 * B = z1 + z4·s, C = z2 + z5·s, s = w³:
 *   f² = (3A² − 2Ā) + (3·s·C² + 2B̄)·w + (3B² − 2C̄)·w².
 * 6 Fp2 multiplications (three Fp4 squares, fp4SqrParts) and 6 fused forms.
 */
export function fp12CyclotomicSqr(out: usize, a: usize): void {
  // A' = 3A² − 2Ā
  fp4SqrParts(CT, CU, a + Z0, a + Z3);
  fp2CycRe(CS + Z0, CT, CU, a + Z0); // 3·re − 2·z0
  fp2CycIm(CS + Z3, CU, a + Z3); // 3·im + 2·z3
  // B' = 3·s·C² + 2B̄ ; s·(re + im·s) = ξ·im + re·s
  fp4SqrParts(CT, CU, a + Z2, a + Z5);
  fp2CycXiIm(CS + Z1, CU, a + Z1); // 3ξ·im + 2·z1
  fp2CycRe(CS + Z4, CT, CU, a + Z4); // 3·re − 2·z4
  // C' = 3B² − 2C̄
  fp4SqrParts(CT, CU, a + Z1, a + Z4);
  fp2CycRe(CS + Z2, CT, CU, a + Z2); // 3·re − 2·z2
  fp2CycIm(CS + Z5, CU, a + Z5); // 3·im + 2·z5
  fp12Copy(out, CS);
}

const EXP_ACC: usize = memory.data(<i32>FP12_SIZE, 4);
/** Odd powers a, a³, a⁵, a⁷, then their conjugates (inverses in the cyclotomic subgroup). */
const EXP_ODD: usize = memory.data(<i32>(8 * FP12_SIZE), 4);
const EXP_ODD_COUNT: usize = 4;

// @ts-ignore: decorator
@inline function oddPower(d: i32): usize {
  // digit d = ±(2j + 1) → power j, its conjugate after the positive ones
  return d > 0 ? EXP_ODD + <usize>((d - 1) >> 1) * FP12_SIZE : EXP_ODD + (EXP_ODD_COUNT + <usize>((-d - 1) >> 1)) * FP12_SIZE;
}

/**
 * out = a^u for a in the cyclotomic subgroup, u the BN seed, left to right
 * over the width-4 NAF of u (Möller 2001, "Algorithms for multi-exponentiation",
 * §3; digits from scripts/asc-constants.ts): 62 cyclotomic squarings, 13
 * multiplications, and 1 squaring + 3 multiplications for a³, a⁵, a⁷.
 * Negative digits use conjugates, which are inverses in the cyclotomic
 * subgroup (Granger–Scott 2010, §2).
 */
export function fp12ExpByU(out: usize, a: usize): void {
  fp12Copy(EXP_ODD, a);
  fp12CyclotomicSqr(EXP_ACC, a); // a²
  for (let j: usize = 1; j < EXP_ODD_COUNT; j++) {
    fp12Mul(EXP_ODD + j * FP12_SIZE, EXP_ODD + (j - 1) * FP12_SIZE, EXP_ACC);
  }
  for (let j: usize = 0; j < EXP_ODD_COUNT; j++) {
    fp12Conj(EXP_ODD + (EXP_ODD_COUNT + j) * FP12_SIZE, EXP_ODD + j * FP12_SIZE);
  }
  fp12Copy(EXP_ACC, oddPower(load<i8>(U_WNAF + <usize>(U_WNAF_LEN - 1))));
  for (let i = U_WNAF_LEN - 2; i >= 0; i--) {
    fp12CyclotomicSqr(EXP_ACC, EXP_ACC);
    const d = load<i8>(U_WNAF + <usize>i) as i32;
    if (d != 0) fp12Mul(EXP_ACC, EXP_ACC, oddPower(d));
  }
  fp12Copy(out, EXP_ACC);
}
