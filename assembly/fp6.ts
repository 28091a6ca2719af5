// Fp6 = Fp2[v]/(v³ − ξ), ξ = 9 + u. An element b0 + b1·v + b2·v² is stored
// as three consecutive Fp2 (FP6_B0, FP6_B1, FP6_B2). Formulas: Devegili,
// Ó hÉigeartaigh, Scott, Dahab 2006, "Multiplication and squaring on
// pairing-friendly fields" (Karatsuba for cubic extensions).

import {
  FP2_SIZE, fp2Add, fp2Sub, fp2Mul, fp2Sqr, fp2MulByXi, fp2Neg, fp2Inv, fp2Copy,
  fp2SetZero, fp2SetOne, fp2IsZero, fp2Eq, fp2Double, fp2AddLazy,
  fp2Sub2, fp2Sub2Add, fp2SubAdd, fp2XiSub2Add, fp2XiSubAdd, fp2Sub2AddXi,
} from "./fp2";

export const FP6_B0: usize = 0;
export const FP6_B1: usize = FP2_SIZE;
export const FP6_B2: usize = 2 * FP2_SIZE;
export const FP6_SIZE: usize = 3 * FP2_SIZE;

// Scratch (each function uses only its own or calls leaf fp2 routines).
const V0: usize = memory.data(<i32>FP2_SIZE, 4);
const V1: usize = memory.data(<i32>FP2_SIZE, 4);
const V2: usize = memory.data(<i32>FP2_SIZE, 4);
const S0: usize = memory.data(<i32>FP2_SIZE, 4);
const S1: usize = memory.data(<i32>FP2_SIZE, 4);
const R0: usize = memory.data(<i32>FP2_SIZE, 4);
const R1: usize = memory.data(<i32>FP2_SIZE, 4);
const R2: usize = memory.data(<i32>FP2_SIZE, 4);

export function fp6Add(out: usize, a: usize, b: usize): void {
  fp2Add(out + FP6_B0, a + FP6_B0, b + FP6_B0);
  fp2Add(out + FP6_B1, a + FP6_B1, b + FP6_B1);
  fp2Add(out + FP6_B2, a + FP6_B2, b + FP6_B2);
}
/** out = a + b lazily (see fpAddLazy): only for operands of fp6Mul / fp6MulBy01. */
export function fp6AddLazy(out: usize, a: usize, b: usize): void {
  fp2AddLazy(out + FP6_B0, a + FP6_B0, b + FP6_B0);
  fp2AddLazy(out + FP6_B1, a + FP6_B1, b + FP6_B1);
  fp2AddLazy(out + FP6_B2, a + FP6_B2, b + FP6_B2);
}
export function fp6Sub(out: usize, a: usize, b: usize): void {
  fp2Sub(out + FP6_B0, a + FP6_B0, b + FP6_B0);
  fp2Sub(out + FP6_B1, a + FP6_B1, b + FP6_B1);
  fp2Sub(out + FP6_B2, a + FP6_B2, b + FP6_B2);
}
export function fp6Double(out: usize, a: usize): void {
  fp2Double(out + FP6_B0, a + FP6_B0);
  fp2Double(out + FP6_B1, a + FP6_B1);
  fp2Double(out + FP6_B2, a + FP6_B2);
}
export function fp6Neg(out: usize, a: usize): void {
  fp2Neg(out + FP6_B0, a + FP6_B0);
  fp2Neg(out + FP6_B1, a + FP6_B1);
  fp2Neg(out + FP6_B2, a + FP6_B2);
}
export function fp6Copy(out: usize, a: usize): void {
  memory.copy(out, a, FP6_SIZE);
}
export function fp6SetZero(out: usize): void {
  memory.fill(out, 0, FP6_SIZE);
}
export function fp6SetOne(out: usize): void {
  fp2SetOne(out + FP6_B0);
  fp2SetZero(out + FP6_B1);
  fp2SetZero(out + FP6_B2);
}
export function fp6IsZero(a: usize): bool {
  return fp2IsZero(a + FP6_B0) && fp2IsZero(a + FP6_B1) && fp2IsZero(a + FP6_B2);
}
export function fp6Eq(a: usize, b: usize): bool {
  return fp2Eq(a + FP6_B0, b + FP6_B0) && fp2Eq(a + FP6_B1, b + FP6_B1) && fp2Eq(a + FP6_B2, b + FP6_B2);
}

/** out = a·v = ξ·a2 + a0·v + a1·v². */
export function fp6MulByV(out: usize, a: usize): void {
  fp2MulByXi(R0, a + FP6_B2);
  fp2Copy(out + FP6_B2, a + FP6_B1);
  fp2Copy(out + FP6_B1, a + FP6_B0);
  fp2Copy(out + FP6_B0, R0);
}

/**
 * out = a·b, Karatsuba: 6 Fp2 multiplications. The operand sums are lazy
 * (fpAddLazy); a and b may themselves be lazy sums of reduced values, since
 * they only enter multiplications (bounded by 8p, see fp.ts).
 */
export function fp6Mul(out: usize, a: usize, b: usize): void {
  fp2Mul(V0, a + FP6_B0, b + FP6_B0); // v0 = a0b0
  fp2Mul(V1, a + FP6_B1, b + FP6_B1); // v1 = a1b1
  fp2Mul(V2, a + FP6_B2, b + FP6_B2); // v2 = a2b2
  fp2AddLazy(S0, a + FP6_B1, a + FP6_B2);
  fp2AddLazy(S1, b + FP6_B1, b + FP6_B2);
  fp2Mul(R0, S0, S1); // (a1 + a2)(b1 + b2)
  fp2AddLazy(S0, a + FP6_B0, a + FP6_B1);
  fp2AddLazy(S1, b + FP6_B0, b + FP6_B1);
  fp2Mul(R1, S0, S1); // (a0 + a1)(b0 + b1)
  fp2AddLazy(S0, a + FP6_B0, a + FP6_B2);
  fp2AddLazy(S1, b + FP6_B0, b + FP6_B2);
  fp2Mul(R2, S0, S1); // (a0 + a2)(b0 + b2)
  // a and b are read no more: out may alias them.
  fp2XiSub2Add(out + FP6_B0, R0, V1, V2, V0); // c0 = ξ((a1 + a2)(b1 + b2) − v1 − v2) + v0
  fp2Sub2AddXi(out + FP6_B1, R1, V0, V1, V2); // c1 = (a0 + a1)(b0 + b1) − v0 − v1 + ξ·v2
  fp2Sub2Add(out + FP6_B2, R2, V0, V2, V1); // c2 = (a0 + a2)(b0 + b2) − v0 − v2 + v1
}

/** out = a², Chung–Hasan SQR2 (2006): 2 Fp2 multiplications + 3 squarings. */
export function fp6Sqr(out: usize, a: usize): void {
  fp2Sqr(V0, a + FP6_B0); // s0 = a0²
  fp2Mul(V1, a + FP6_B0, a + FP6_B1);
  fp2Double(V1, V1); // s1 = 2a0a1
  fp2Sub(S0, a + FP6_B0, a + FP6_B1);
  fp2Add(S0, S0, a + FP6_B2);
  fp2Sqr(V2, S0); // s2 = (a0 − a1 + a2)²
  fp2Mul(S1, a + FP6_B1, a + FP6_B2);
  fp2Double(S1, S1); // s3 = 2a1a2
  fp2Sqr(R2, a + FP6_B2); // s4 = a2²
  // c0 = s0 + ξ·s3
  fp2MulByXi(R0, S1);
  fp2Add(R0, R0, V0);
  // c1 = s1 + ξ·s4
  fp2MulByXi(R1, R2);
  fp2Add(R1, R1, V1);
  // c2 = s1 + s2 + s3 − s0 − s4
  fp2Add(S0, V1, V2);
  fp2Add(S0, S0, S1);
  fp2Sub(S0, S0, V0);
  fp2Sub(out + FP6_B2, S0, R2);
  fp2Copy(out + FP6_B0, R0);
  fp2Copy(out + FP6_B1, R1);
}

/** out = a·b for b ∈ Fp2 (3 Fp2 multiplications). */
export function fp6MulByFp2(out: usize, a: usize, b: usize): void {
  fp2Mul(out + FP6_B0, a + FP6_B0, b);
  fp2Mul(out + FP6_B1, a + FP6_B1, b);
  fp2Mul(out + FP6_B2, a + FP6_B2, b);
}

/** out = a·(y0 + y1·v): 5 Fp2 multiplications (sparse Karatsuba). a, y0 may be lazy sums. */
export function fp6MulBy01(out: usize, a: usize, y0: usize, y1: usize): void {
  fp2Mul(V0, a + FP6_B0, y0); // v0 = a0y0
  fp2Mul(V1, a + FP6_B1, y1); // v1 = a1y1
  fp2AddLazy(S0, a + FP6_B1, a + FP6_B2);
  fp2Mul(R0, S0, y1); // (a1 + a2)·y1
  fp2AddLazy(S0, a + FP6_B0, a + FP6_B1);
  fp2AddLazy(S1, y0, y1);
  fp2Mul(R1, S0, S1); // (a0 + a1)(y0 + y1)
  fp2AddLazy(S0, a + FP6_B0, a + FP6_B2);
  fp2Mul(R2, S0, y0); // (a0 + a2)·y0
  // a is read no more: out may alias it.
  fp2XiSubAdd(out + FP6_B0, R0, V1, V0); // c0 = ξ((a1 + a2)y1 − v1) + v0 = a0y0 + ξ·a2y1
  fp2Sub2(out + FP6_B1, R1, V0, V1); // c1 = (a0 + a1)(y0 + y1) − v0 − v1
  fp2SubAdd(out + FP6_B2, R2, V0, V1); // c2 = (a0 + a2)y0 − v0 + v1 = a2y0 + a1y1
}

/** out = a⁻¹ (norm to Fp2; Scott's formulation as in gnark-crypto e6.Inverse). */
export function fp6Inv(out: usize, a: usize): void {
  // t0 = a0² − ξ·a1a2, t1 = ξ·a2² − a0a1, t2 = a1² − a0a2
  fp2Sqr(R0, a + FP6_B0);
  fp2Mul(S0, a + FP6_B1, a + FP6_B2);
  fp2MulByXi(S0, S0);
  fp2Sub(R0, R0, S0);
  fp2Sqr(R1, a + FP6_B2);
  fp2MulByXi(R1, R1);
  fp2Mul(S0, a + FP6_B0, a + FP6_B1);
  fp2Sub(R1, R1, S0);
  fp2Sqr(R2, a + FP6_B1);
  fp2Mul(S0, a + FP6_B0, a + FP6_B2);
  fp2Sub(R2, R2, S0);
  // den = a0·t0 + ξ·(a2·t1 + a1·t2)
  fp2Mul(S0, a + FP6_B2, R1);
  fp2Mul(S1, a + FP6_B1, R2);
  fp2Add(S0, S0, S1);
  fp2MulByXi(S0, S0);
  fp2Mul(S1, a + FP6_B0, R0);
  fp2Add(S0, S0, S1);
  fp2Inv(S0, S0);
  fp2Mul(out + FP6_B0, R0, S0);
  fp2Mul(out + FP6_B1, R1, S0);
  fp2Mul(out + FP6_B2, R2, S0);
}
