// Fp2 = Fp[u]/(u² + 1). An element c0 + c1·u is stored as c0 then c1
// (FP2_C0, FP2_C1). The wire order of EIP-197 (imaginary part first) is a
// matter of the byte codec only (fp2FromBytes / fp2ToBytes below).

import {
  FP_SIZE, FP_BYTES, fpAdd, fpSub, fpMul, fpNeg, fpInv, fpCopy, fpIsZero, fpEq,
  fpFromBytes, fpToBytes, fpSetZero, fpSetOne, fpDouble, fpAddLazy,
} from "./fp";

export const FP2_C0: usize = 0;
export const FP2_C1: usize = FP_SIZE;
export const FP2_SIZE: usize = 2 * FP_SIZE;
/** Wire encoding: c1 (imaginary) then c0 (real), 32 bytes each, as in EIP-197. */
export { FP2_BYTES } from "./layout";
const WIRE_C1: usize = 0;
const WIRE_C0: usize = FP_BYTES;

const T0: usize = memory.data(<i32>FP_SIZE, 4);
const T1: usize = memory.data(<i32>FP_SIZE, 4);
const T2: usize = memory.data(<i32>FP_SIZE, 4);

export function fp2Add(out: usize, a: usize, b: usize): void {
  fpAdd(out + FP2_C0, a + FP2_C0, b + FP2_C0);
  fpAdd(out + FP2_C1, a + FP2_C1, b + FP2_C1);
}
/** out = a + b lazily (see fpAddLazy): only for operands of fp2Mul. */
export function fp2AddLazy(out: usize, a: usize, b: usize): void {
  fpAddLazy(out + FP2_C0, a + FP2_C0, b + FP2_C0);
  fpAddLazy(out + FP2_C1, a + FP2_C1, b + FP2_C1);
}
export function fp2Sub(out: usize, a: usize, b: usize): void {
  fpSub(out + FP2_C0, a + FP2_C0, b + FP2_C0);
  fpSub(out + FP2_C1, a + FP2_C1, b + FP2_C1);
}
export function fp2Double(out: usize, a: usize): void {
  fpDouble(out + FP2_C0, a + FP2_C0);
  fpDouble(out + FP2_C1, a + FP2_C1);
}
export function fp2Neg(out: usize, a: usize): void {
  fpNeg(out + FP2_C0, a + FP2_C0);
  fpNeg(out + FP2_C1, a + FP2_C1);
}
/** out = ā = c0 − c1·u (the p-power Frobenius on Fp2). */
export function fp2Conj(out: usize, a: usize): void {
  fpCopy(out + FP2_C0, a + FP2_C0);
  fpNeg(out + FP2_C1, a + FP2_C1);
}
export function fp2Copy(out: usize, a: usize): void {
  memory.copy(out, a, FP2_SIZE);
}
export function fp2SetZero(out: usize): void {
  memory.fill(out, 0, FP2_SIZE);
}
export function fp2SetOne(out: usize): void {
  fpSetOne(out + FP2_C0);
  fpSetZero(out + FP2_C1);
}
export function fp2IsZero(a: usize): bool {
  return fpIsZero(a + FP2_C0) && fpIsZero(a + FP2_C1);
}
export function fp2Eq(a: usize, b: usize): bool {
  return fpEq(a + FP2_C0, b + FP2_C0) && fpEq(a + FP2_C1, b + FP2_C1);
}

// out = a·b, with one Montgomery reduction per coefficient: generated
// straight-line code in fp2mul.ts (scripts/asc-fp2mul.ts explains the method
// and its bounds). Operands may be lazy sums < 4p; the result is reduced.
export { fp2Mul } from "./fp2mul";

/** out = a², complex squaring (Devegili et al. 2006, §3): (a0 + a1)(a0 − a1) + 2a0a1·u, 2 Fp multiplications. */
export function fp2Sqr(out: usize, a: usize): void {
  fpAddLazy(T0, a + FP2_C0, a + FP2_C1); // a0 + a1 (lazy: only multiplied)
  fpSub(T1, a + FP2_C0, a + FP2_C1); // a0 − a1 (a must be reduced)
  fpMul(T2, a + FP2_C0, a + FP2_C1); // a0·a1
  fpMul(out + FP2_C0, T0, T1); // a0² − a1²
  fpDouble(out + FP2_C1, T2); // 2·a0·a1
}

/** out = a·s for s ∈ Fp. */
export function fp2MulFp(out: usize, a: usize, s: usize): void {
  fpMul(out + FP2_C0, a + FP2_C0, s);
  fpMul(out + FP2_C1, a + FP2_C1, s);
}

// out = a·ξ with ξ = 9 + u, (9a0 − a1) + (a0 + 9a1)·u, and the other fused
// linear forms of the tower (one pass, one reduction per coefficient):
// generated in fp2lin.ts by scripts/asc-fp2lin.ts.
export {
  fp2MulByXi, fp2Sub2, fp2Sub2Add, fp2SubAdd, fp2XiSub2Add, fp2XiSubAdd, fp2Sub2AddXi, fp2SubSubXi, fp2AddXi,
  fp2CycRe, fp2CycIm, fp2CycXiIm, fp2Triple, fp2Quadruple, fp2DoubleSub, fp2DoubleSub2, fp2SubDouble,
  fp2SubOctuple, fp2SubSubDouble, fp2SubTwelve,
} from "./fp2lin";

/** out = a⁻¹ = ā / (a0² + a1²); out = 0 when a = 0. */
export function fp2Inv(out: usize, a: usize): void {
  fpMul(T0, a + FP2_C0, a + FP2_C0);
  fpMul(T1, a + FP2_C1, a + FP2_C1);
  fpAdd(T0, T0, T1); // norm
  fpInv(T0, T0);
  fpMul(out + FP2_C0, a + FP2_C0, T0);
  fpMul(T1, a + FP2_C1, T0);
  fpNeg(out + FP2_C1, T1);
}

/** Decodes the EIP-197 wire form (c1 ‖ c0, big-endian); false if a coordinate is ≥ p. */
export function fp2FromBytes(out: usize, src: usize): bool {
  if (!fpFromBytes(out + FP2_C1, src + WIRE_C1)) return false;
  return fpFromBytes(out + FP2_C0, src + WIRE_C0);
}
export function fp2ToBytes(dst: usize, a: usize): void {
  fpToBytes(dst + WIRE_C1, a + FP2_C1);
  fpToBytes(dst + WIRE_C0, a + FP2_C0);
}
