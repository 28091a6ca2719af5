// G1 = E(Fp), E: y² = x³ + 3, prime order r (cofactor 1: every point on the
// curve is in G1, so decoding checks canonical coordinates and the equation).
//
// Affine points: (x, y) at G1_X, G1_Y; the point at infinity has no affine
// form here (callers track it). Jacobian points: (X, Y, Z) with x = X/Z²,
// y = Y/Z³, infinity ⇔ Z = 0. Formulas from the Explicit-Formulas Database
// (Bernstein–Lange), curve shape a = 0: dbl-2009-l, madd-2007-bl, add-2007-bl.
// Does not handle secrets: branches on data.

import {
  FP_SIZE, FP_BYTES, fpAdd, fpSub, fpMul, fpSqr, fpDouble, fpInv, fpCopy, fpSetOne,
  fpSetZero, fpIsZero, fpEq, fpFromBytes, fpToBytes, fpNeg,
} from "./fp";
import { G1_B } from "./constants";

export const G1_X: usize = 0;
export const G1_Y: usize = FP_SIZE;
export const G1_Z: usize = 2 * FP_SIZE;
export const G1_AFFINE_SIZE: usize = 2 * FP_SIZE;
export const G1_JACOBIAN_SIZE: usize = 3 * FP_SIZE;
/** Wire form: x ‖ y, 32-byte big-endian each; (0, 0) encodes infinity (EIP-196). */
export { G1_BYTES } from "./layout";
const WIRE_X: usize = 0;
const WIRE_Y: usize = FP_BYTES;

/** Decoding outcomes shared by G1 and G2. */
export const DECODE_OK: i32 = 0;
export const DECODE_NONCANONICAL: i32 = 1;
export const DECODE_INFINITY: i32 = 2;
export const DECODE_NOT_ON_CURVE: i32 = 3;
export const DECODE_NOT_IN_SUBGROUP: i32 = 4;

const T0: usize = memory.data(<i32>FP_SIZE, 4);
const T1: usize = memory.data(<i32>FP_SIZE, 4);

/** y² = x³ + 3 for an affine point. */
export function g1IsOnCurve(p: usize): bool {
  fpSqr(T0, p + G1_X);
  fpMul(T0, T0, p + G1_X);
  fpAdd(T0, T0, G1_B); // x³ + 3
  fpSqr(T1, p + G1_Y);
  return fpEq(T0, T1);
}

/** Decodes x ‖ y into an affine point; checks canonical coordinates, then the curve equation. */
export function g1FromBytes(out: usize, src: usize): i32 {
  if (!fpFromBytes(out + G1_X, src + WIRE_X)) return DECODE_NONCANONICAL;
  if (!fpFromBytes(out + G1_Y, src + WIRE_Y)) return DECODE_NONCANONICAL;
  if (fpIsZero(out + G1_X) && fpIsZero(out + G1_Y)) return DECODE_INFINITY;
  return g1IsOnCurve(out) ? DECODE_OK : DECODE_NOT_ON_CURVE;
}

export function g1ToBytes(dst: usize, p: usize): void {
  fpToBytes(dst + WIRE_X, p + G1_X);
  fpToBytes(dst + WIRE_Y, p + G1_Y);
}

export function g1JacobianIsInfinity(p: usize): bool {
  return fpIsZero(p + G1_Z);
}
export function g1JacobianSetInfinity(p: usize): void {
  fpSetOne(p + G1_X);
  fpSetOne(p + G1_Y);
  fpSetZero(p + G1_Z);
}
export function g1JacobianFromAffine(out: usize, a: usize): void {
  fpCopy(out + G1_X, a + G1_X);
  fpCopy(out + G1_Y, a + G1_Y);
  fpSetOne(out + G1_Z);
}
export function g1AffineNeg(out: usize, a: usize): void {
  fpCopy(out + G1_X, a + G1_X);
  fpNeg(out + G1_Y, a + G1_Y);
}

const DA: usize = memory.data(<i32>FP_SIZE, 4);
const DB: usize = memory.data(<i32>FP_SIZE, 4);
const DC: usize = memory.data(<i32>FP_SIZE, 4);
const DD: usize = memory.data(<i32>FP_SIZE, 4);
const DE: usize = memory.data(<i32>FP_SIZE, 4);

/** out = 2p (Jacobian), dbl-2009-l: 2M + 5S. */
export function g1Double(out: usize, p: usize): void {
  fpSqr(DA, p + G1_X); // A = X²
  fpSqr(DB, p + G1_Y); // B = Y²
  fpSqr(DC, DB); // C = B²
  fpAdd(DD, p + G1_X, DB);
  fpSqr(DD, DD);
  fpSub(DD, DD, DA);
  fpSub(DD, DD, DC);
  fpDouble(DD, DD); // D = 2((X + B)² − A − C)
  fpDouble(DE, DA);
  fpAdd(DE, DE, DA); // E = 3A
  fpMul(out + G1_Z, p + G1_Y, p + G1_Z);
  fpDouble(out + G1_Z, out + G1_Z); // Z3 = 2YZ (Y, Z no longer needed)
  fpSqr(DA, DE); // F = E²
  fpDouble(DB, DD);
  fpSub(out + G1_X, DA, DB); // X3 = F − 2D
  fpSub(DD, DD, out + G1_X);
  fpMul(DD, DD, DE); // E(D − X3)
  fpDouble(DC, DC);
  fpDouble(DC, DC);
  fpDouble(DC, DC); // 8C
  fpSub(out + G1_Y, DD, DC); // Y3 = E(D − X3) − 8C
}

const MZ: usize = memory.data(<i32>FP_SIZE, 4);
const MU2: usize = memory.data(<i32>FP_SIZE, 4);
const MS2: usize = memory.data(<i32>FP_SIZE, 4);
const MH: usize = memory.data(<i32>FP_SIZE, 4);
const MHH: usize = memory.data(<i32>FP_SIZE, 4);
const MI: usize = memory.data(<i32>FP_SIZE, 4);
const MJ: usize = memory.data(<i32>FP_SIZE, 4);
const MR: usize = memory.data(<i32>FP_SIZE, 4);
const MV: usize = memory.data(<i32>FP_SIZE, 4);

/**
 * The X and Y both additions end with, from r (MR), J (MJ) and V (MV):
 * X3 = r² − J − 2V, Y3 = r(V − X3) − 2·yj, where yj is Y1·J (mixed) or
 * S1·J (Jacobian); MU2, MV and yj are overwritten. Inlined, so the
 * additions compile as before.
 */
// @ts-ignore: decorator
@inline function g1AddFinish(out: usize, yj: usize): void {
  // X3 = r² − J − 2V
  fpSqr(MU2, MR);
  fpSub(MU2, MU2, MJ);
  fpSub(MU2, MU2, MV);
  fpSub(out + G1_X, MU2, MV);
  // Y3 = r(V − X3) − 2·yj
  fpSub(MV, MV, out + G1_X);
  fpMul(MV, MV, MR);
  fpDouble(yj, yj);
  fpSub(out + G1_Y, MV, yj);
}

/** out = p + q, p Jacobian, q affine (madd-2007-bl: 7M + 4S). out may alias p. */
export function g1AddMixed(out: usize, p: usize, q: usize): void {
  if (g1JacobianIsInfinity(p)) {
    g1JacobianFromAffine(out, q);
    return;
  }
  fpSqr(MZ, p + G1_Z); // Z1Z1
  fpMul(MU2, q + G1_X, MZ); // U2 = X2·Z1Z1
  fpMul(MS2, q + G1_Y, p + G1_Z);
  fpMul(MS2, MS2, MZ); // S2 = Y2·Z1·Z1Z1
  fpSub(MH, MU2, p + G1_X); // H = U2 − X1
  fpSub(MR, MS2, p + G1_Y);
  fpDouble(MR, MR); // r = 2(S2 − Y1)
  if (fpIsZero(MH)) {
    if (fpIsZero(MR)) g1Double(out, p);
    else g1JacobianSetInfinity(out);
    return;
  }
  fpSqr(MHH, MH); // HH
  fpDouble(MI, MHH);
  fpDouble(MI, MI); // I = 4HH
  fpMul(MJ, MH, MI); // J = H·I
  fpMul(MV, p + G1_X, MI); // V = X1·I
  // Z3 = (Z1 + H)² − Z1Z1 − HH
  fpAdd(out + G1_Z, p + G1_Z, MH);
  fpSqr(out + G1_Z, out + G1_Z);
  fpSub(out + G1_Z, out + G1_Z, MZ);
  fpSub(out + G1_Z, out + G1_Z, MHH);
  fpMul(MS2, p + G1_Y, MJ); // Y1·J, read before Y is overwritten
  g1AddFinish(out, MS2);
}

/** out = affine form of the Jacobian p (p must not be infinity). */
export function g1ToAffine(out: usize, p: usize): void {
  fpInv(T0, p + G1_Z);
  fpSqr(T1, T0);
  fpMul(out + G1_X, p + G1_X, T1);
  fpMul(T1, T1, T0);
  fpMul(out + G1_Y, p + G1_Y, T1);
}

/** Bit i (0 = least significant) of a 32-byte big-endian scalar. */
// @ts-ignore: decorator
@inline export function scalarBit(s: usize, i: i32): u32 {
  return ((load<u8>(s + 31 - <usize>(i >> 3)) as u32) >> ((i & 7) as u32)) & 1;
}

/**
 * out = Σ s_k·P_k (Jacobian) for n affine points at points + k·pointStride
 * and 32-byte big-endian scalars at scalars + k·32, using only the low
 * `bits` bits. Straus–Shamir interleaving: one shared doubling chain.
 */
export function g1MsmBinary(out: usize, points: usize, pointStride: usize, scalars: usize, n: i32, bits: i32): void {
  g1JacobianSetInfinity(out);
  for (let i = bits - 1; i >= 0; i--) {
    if (!g1JacobianIsInfinity(out)) g1Double(out, out);
    for (let k = 0; k < n; k++) {
      if (scalarBit(scalars + <usize>k * FP_BYTES, i)) g1AddMixed(out, out, points + <usize>k * pointStride);
    }
  }
}

const AZ1: usize = memory.data(<i32>FP_SIZE, 4);
const AZ2: usize = memory.data(<i32>FP_SIZE, 4);
const AU1: usize = memory.data(<i32>FP_SIZE, 4);
const AS1: usize = memory.data(<i32>FP_SIZE, 4);

/** out = p + q, both Jacobian (add-2007-bl: 11M + 5S). out may alias either. */
export function g1Add(out: usize, p: usize, q: usize): void {
  if (g1JacobianIsInfinity(p)) {
    memory.copy(out, q, G1_JACOBIAN_SIZE);
    return;
  }
  if (g1JacobianIsInfinity(q)) {
    memory.copy(out, p, G1_JACOBIAN_SIZE);
    return;
  }
  fpSqr(AZ1, p + G1_Z); // Z1Z1
  fpSqr(AZ2, q + G1_Z); // Z2Z2
  fpMul(AU1, p + G1_X, AZ2); // U1 = X1·Z2Z2
  fpMul(MU2, q + G1_X, AZ1); // U2 = X2·Z1Z1
  fpMul(AS1, p + G1_Y, q + G1_Z);
  fpMul(AS1, AS1, AZ2); // S1 = Y1·Z2³
  fpMul(MS2, q + G1_Y, p + G1_Z);
  fpMul(MS2, MS2, AZ1); // S2 = Y2·Z1³
  fpSub(MH, MU2, AU1); // H = U2 − U1
  fpSub(MR, MS2, AS1);
  fpDouble(MR, MR); // r = 2(S2 − S1)
  if (fpIsZero(MH)) {
    if (fpIsZero(MR)) g1Double(out, p);
    else g1JacobianSetInfinity(out);
    return;
  }
  fpDouble(MI, MH);
  fpSqr(MI, MI); // I = (2H)²
  fpMul(MJ, MH, MI); // J = H·I
  fpMul(MV, AU1, MI); // V = U1·I
  // Z3 = ((Z1 + Z2)² − Z1Z1 − Z2Z2)·H
  fpAdd(MZ, p + G1_Z, q + G1_Z);
  fpSqr(MZ, MZ);
  fpSub(MZ, MZ, AZ1);
  fpSub(MZ, MZ, AZ2);
  fpMul(out + G1_Z, MZ, MH);
  fpMul(AS1, AS1, MJ); // S1·J
  g1AddFinish(out, AS1);
}
