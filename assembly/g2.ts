// G2 ⊂ E'(Fp2), E': y² = x³ + b', b' = 3/ξ (D-type sextic twist of
// E: y² = x³ + 3). Unlike G1, E'(Fp2) has a large cofactor
// (#E'(Fp2) = r·(2p − r)), so a decoded point must also be checked for
// membership in the order-r subgroup; see g2IsInSubgroup.
//
// Affine (x, y) at G2_X, G2_Y; Jacobian (X, Y, Z), x = X/Z², y = Y/Z³,
// infinity ⇔ Z = 0. Same EFD formulas as g1.ts over Fp2.

import {
  FP2_SIZE, FP2_BYTES, fp2Add, fp2Sub, fp2Mul, fp2Sqr, fp2Double, fp2Inv, fp2Copy,
  fp2SetOne, fp2SetZero, fp2IsZero, fp2Eq, fp2FromBytes, fp2ToBytes, fp2Neg, fp2Conj,
  fp2Triple, fp2Quadruple, fp2DoubleSub, fp2DoubleSub2, fp2SubDouble, fp2SubOctuple, fp2SubSubDouble, fp2Sub2,
} from "./fp2";
import { psiX, psiY, psi2X, psi2Y } from "./frobenius";
import { TWIST_B, SEED_U, R_BE } from "./constants";
import {
  DECODE_OK, DECODE_NONCANONICAL, DECODE_INFINITY, DECODE_NOT_ON_CURVE, DECODE_NOT_IN_SUBGROUP,
  scalarBit,
} from "./g1";

export const G2_X: usize = 0;
export const G2_Y: usize = FP2_SIZE;
export const G2_Z: usize = 2 * FP2_SIZE;
export const G2_AFFINE_SIZE: usize = 2 * FP2_SIZE;
export const G2_JACOBIAN_SIZE: usize = 3 * FP2_SIZE;
/** Wire form (EIP-197): x.c1 ‖ x.c0 ‖ y.c1 ‖ y.c0, 32-byte big-endian each. */
export { G2_BYTES } from "./layout";
const WIRE_X: usize = 0;
const WIRE_Y: usize = FP2_BYTES;

const T0: usize = memory.data(<i32>FP2_SIZE, 4);
const T1: usize = memory.data(<i32>FP2_SIZE, 4);

export function g2IsOnCurve(p: usize): bool {
  fp2Sqr(T0, p + G2_X);
  fp2Mul(T0, T0, p + G2_X);
  fp2Add(T0, T0, TWIST_B); // x³ + b'
  fp2Sqr(T1, p + G2_Y);
  return fp2Eq(T0, T1);
}

/** Decodes and validates a G2 point: canonical, on E', in the order-r subgroup. */
export function g2FromBytes(out: usize, src: usize): i32 {
  if (!fp2FromBytes(out + G2_X, src + WIRE_X)) return DECODE_NONCANONICAL;
  if (!fp2FromBytes(out + G2_Y, src + WIRE_Y)) return DECODE_NONCANONICAL;
  if (fp2IsZero(out + G2_X) && fp2IsZero(out + G2_Y)) return DECODE_INFINITY;
  if (!g2IsOnCurve(out)) return DECODE_NOT_ON_CURVE;
  return g2IsInSubgroup(out) ? DECODE_OK : DECODE_NOT_IN_SUBGROUP;
}

export function g2ToBytes(dst: usize, p: usize): void {
  fp2ToBytes(dst + WIRE_X, p + G2_X);
  fp2ToBytes(dst + WIRE_Y, p + G2_Y);
}

export function g2JacobianIsInfinity(p: usize): bool {
  return fp2IsZero(p + G2_Z);
}
export function g2JacobianSetInfinity(p: usize): void {
  fp2SetOne(p + G2_X);
  fp2SetOne(p + G2_Y);
  fp2SetZero(p + G2_Z);
}
export function g2JacobianFromAffine(out: usize, a: usize): void {
  fp2Copy(out + G2_X, a + G2_X);
  fp2Copy(out + G2_Y, a + G2_Y);
  fp2SetOne(out + G2_Z);
}
export function g2AffineNeg(out: usize, a: usize): void {
  fp2Copy(out + G2_X, a + G2_X);
  fp2Neg(out + G2_Y, a + G2_Y);
}

const DA: usize = memory.data(<i32>FP2_SIZE, 4);
const DB: usize = memory.data(<i32>FP2_SIZE, 4);
const DC: usize = memory.data(<i32>FP2_SIZE, 4);
const DD: usize = memory.data(<i32>FP2_SIZE, 4);
const DE: usize = memory.data(<i32>FP2_SIZE, 4);

/** out = 2p (Jacobian), dbl-2009-l. */
export function g2Double(out: usize, p: usize): void {
  fp2Sqr(DA, p + G2_X); // A = X²
  fp2Sqr(DB, p + G2_Y); // B = Y²
  fp2Sqr(DC, DB); // C = B²
  fp2Add(DD, p + G2_X, DB);
  fp2Sqr(DD, DD);
  fp2DoubleSub2(DD, DD, DA, DC); // D = 2((X + B)² − A − C)
  fp2Triple(DE, DA); // E = 3A
  fp2Mul(out + G2_Z, p + G2_Y, p + G2_Z);
  fp2Double(out + G2_Z, out + G2_Z); // Z3 = 2YZ
  fp2Sqr(DA, DE); // F = E²
  fp2SubDouble(out + G2_X, DA, DD); // X3 = F − 2D
  fp2Sub(DD, DD, out + G2_X);
  fp2Mul(DD, DD, DE);
  fp2SubOctuple(out + G2_Y, DD, DC); // Y3 = E(D − X3) − 8C
}

const MZ: usize = memory.data(<i32>FP2_SIZE, 4);
const MU2: usize = memory.data(<i32>FP2_SIZE, 4);
const MS2: usize = memory.data(<i32>FP2_SIZE, 4);
const MH: usize = memory.data(<i32>FP2_SIZE, 4);
const MHH: usize = memory.data(<i32>FP2_SIZE, 4);
const MI: usize = memory.data(<i32>FP2_SIZE, 4);
const MJ: usize = memory.data(<i32>FP2_SIZE, 4);
const MR: usize = memory.data(<i32>FP2_SIZE, 4);
const MV: usize = memory.data(<i32>FP2_SIZE, 4);

/** out = p + q, p Jacobian, q affine (madd-2007-bl). out may alias p. */
export function g2AddMixed(out: usize, p: usize, q: usize): void {
  if (g2JacobianIsInfinity(p)) {
    g2JacobianFromAffine(out, q);
    return;
  }
  fp2Sqr(MZ, p + G2_Z); // Z1Z1
  fp2Mul(MU2, q + G2_X, MZ); // U2
  fp2Mul(MS2, q + G2_Y, p + G2_Z);
  fp2Mul(MS2, MS2, MZ); // S2
  fp2Sub(MH, MU2, p + G2_X); // H
  fp2DoubleSub(MR, MS2, p + G2_Y); // r = 2(S2 − Y1)
  if (fp2IsZero(MH)) {
    if (fp2IsZero(MR)) g2Double(out, p);
    else g2JacobianSetInfinity(out);
    return;
  }
  fp2Sqr(MHH, MH);
  fp2Quadruple(MI, MHH); // I = 4HH
  fp2Mul(MJ, MH, MI); // J
  fp2Mul(MV, p + G2_X, MI); // V
  fp2Add(out + G2_Z, p + G2_Z, MH);
  fp2Sqr(out + G2_Z, out + G2_Z);
  fp2Sub2(out + G2_Z, out + G2_Z, MZ, MHH); // Z3 = (Z1 + H)² − Z1Z1 − HH
  fp2Mul(MS2, p + G2_Y, MJ); // Y1·J
  addTail(out, MS2);
}

/**
 * The common end of both additions (add-2007-bl and madd-2007-bl): from r in
 * MR, J in MJ, V in MV and S·J at `sj` (S = S1, or Y1 in the mixed case),
 * X3 = r² − J − 2V and Y3 = r(V − X3) − 2·S·J. Reads nothing of the inputs,
 * so `out` may alias them. Clobbers MU2, MV and `sj`.
 */
function addTail(out: usize, sj: usize): void {
  fp2Sqr(MU2, MR);
  fp2SubSubDouble(out + G2_X, MU2, MJ, MV); // X3 = r² − J − 2V
  fp2Sub(MV, MV, out + G2_X);
  fp2Mul(MV, MV, MR);
  fp2SubDouble(out + G2_Y, MV, sj); // Y3 = r(V − X3) − 2·S·J
}

const AZ1: usize = memory.data(<i32>FP2_SIZE, 4);
const AZ2: usize = memory.data(<i32>FP2_SIZE, 4);
const AU1: usize = memory.data(<i32>FP2_SIZE, 4);
const AS1: usize = memory.data(<i32>FP2_SIZE, 4);

/** out = p + q, both Jacobian (add-2007-bl). out may alias either. */
export function g2Add(out: usize, p: usize, q: usize): void {
  if (g2JacobianIsInfinity(p)) {
    memory.copy(out, q, G2_JACOBIAN_SIZE);
    return;
  }
  if (g2JacobianIsInfinity(q)) {
    memory.copy(out, p, G2_JACOBIAN_SIZE);
    return;
  }
  fp2Sqr(AZ1, p + G2_Z); // Z1Z1
  fp2Sqr(AZ2, q + G2_Z); // Z2Z2
  fp2Mul(AU1, p + G2_X, AZ2); // U1
  fp2Mul(MU2, q + G2_X, AZ1); // U2
  fp2Mul(AS1, p + G2_Y, q + G2_Z);
  fp2Mul(AS1, AS1, AZ2); // S1 = Y1·Z2³
  fp2Mul(MS2, q + G2_Y, p + G2_Z);
  fp2Mul(MS2, MS2, AZ1); // S2 = Y2·Z1³
  fp2Sub(MH, MU2, AU1); // H
  fp2DoubleSub(MR, MS2, AS1); // r = 2(S2 − S1)
  if (fp2IsZero(MH)) {
    if (fp2IsZero(MR)) g2Double(out, p);
    else g2JacobianSetInfinity(out);
    return;
  }
  fp2Double(MI, MH);
  fp2Sqr(MI, MI); // I = (2H)²
  fp2Mul(MJ, MH, MI); // J
  fp2Mul(MV, AU1, MI); // V = U1·I
  // Z3 = ((Z1 + Z2)² − Z1Z1 − Z2Z2)·H
  fp2Add(MZ, p + G2_Z, q + G2_Z);
  fp2Sqr(MZ, MZ);
  fp2Sub(MZ, MZ, AZ1);
  fp2Sub(MZ, MZ, AZ2);
  fp2Mul(out + G2_Z, MZ, MH);
  fp2Mul(AS1, AS1, MJ); // S1·J
  addTail(out, AS1);
}

const EQ0: usize = memory.data(<i32>FP2_SIZE, 4);
const EQ1: usize = memory.data(<i32>FP2_SIZE, 4);
const EQ2: usize = memory.data(<i32>FP2_SIZE, 4);
const EQ3: usize = memory.data(<i32>FP2_SIZE, 4);

/** Projective equality of two Jacobian points. */
export function g2JacobianEq(p: usize, q: usize): bool {
  const pInf = g2JacobianIsInfinity(p);
  const qInf = g2JacobianIsInfinity(q);
  if (pInf || qInf) return pInf && qInf;
  fp2Sqr(EQ0, p + G2_Z);
  fp2Sqr(EQ1, q + G2_Z);
  fp2Mul(EQ2, p + G2_X, EQ1);
  fp2Mul(EQ3, q + G2_X, EQ0);
  if (!fp2Eq(EQ2, EQ3)) return false;
  fp2Mul(EQ0, EQ0, p + G2_Z);
  fp2Mul(EQ1, EQ1, q + G2_Z);
  fp2Mul(EQ2, p + G2_Y, EQ1);
  fp2Mul(EQ3, q + G2_Y, EQ0);
  return fp2Eq(EQ2, EQ3);
}

export function g2ToAffine(out: usize, p: usize): void {
  fp2Inv(T0, p + G2_Z);
  fp2Sqr(T1, T0);
  fp2Mul(out + G2_X, p + G2_X, T1);
  fp2Mul(T1, T1, T0);
  fp2Mul(out + G2_Y, p + G2_Y, T1);
}

/** out = ψ(p) on Jacobian coordinates (see frobenius.ts). */
export function g2Psi(out: usize, p: usize): void {
  psiX(out + G2_X, p + G2_X);
  psiY(out + G2_Y, p + G2_Y);
  fp2Conj(out + G2_Z, p + G2_Z);
}
/** out = ψ²(p) on Jacobian coordinates. */
export function g2Psi2(out: usize, p: usize): void {
  psi2X(out + G2_X, p + G2_X);
  psi2Y(out + G2_Y, p + G2_Y);
  fp2Copy(out + G2_Z, p + G2_Z);
}

const NAF_DIGITS: usize = memory.data(66, 1);
const NEG_Q: usize = memory.data(<i32>G2_AFFINE_SIZE, 4);

/**
 * out = [k]q for k < 2^63 and affine q (Jacobian result), left to right over
 * the NAF of k, adding q or −q: for the seed u, 24 additions instead of the 28
 * of its binary form.
 */
export function g2MulU64(out: usize, q: usize, k: u64): void {
  let n: i32 = 0;
  while (k != 0) {
    let d: i8 = 0;
    if (k & 1) {
      d = (2 - <i32>(k & 3)) as i8; // ±1, so that k − d ≡ 0 (mod 4)
      k = d > 0 ? k - 1 : k + 1;
    }
    store<i8>(NAF_DIGITS + <usize>n, d);
    n++;
    k >>= 1;
  }
  g2AffineNeg(NEG_Q, q);
  g2JacobianSetInfinity(out);
  for (let i = n - 1; i >= 0; i--) {
    if (!g2JacobianIsInfinity(out)) g2Double(out, out);
    const d = load<i8>(NAF_DIGITS + <usize>i);
    if (d > 0) g2AddMixed(out, out, q);
    else if (d < 0) g2AddMixed(out, out, NEG_Q);
  }
}

/** out = [s]q for a 32-byte big-endian scalar s (Jacobian result). */
export function g2MulScalar(out: usize, q: usize, s: usize): void {
  g2JacobianSetInfinity(out);
  for (let i = 255; i >= 0; i--) {
    if (!g2JacobianIsInfinity(out)) g2Double(out, out);
    if (scalarBit(s, i)) g2AddMixed(out, out, q);
  }
}

const XQ: usize = memory.data(<i32>G2_JACOBIAN_SIZE, 4);
const LHS: usize = memory.data(<i32>G2_JACOBIAN_SIZE, 4);
const TMP: usize = memory.data(<i32>G2_JACOBIAN_SIZE, 4);
const RHS: usize = memory.data(<i32>G2_JACOBIAN_SIZE, 4);

/**
 * True when the affine point q ∈ E'(Fp2) lies in G2 (order r). Instead of
 * [r]Q = O (a 254-bit multiplication) this tests
 *     [u+1]Q + ψ([u]Q) + ψ²([u]Q) = ψ³([2u]Q),
 * El Housni, Guillevic, Piellard 2022, "Co-factor clearing and subgroup
 * membership testing on pairing-friendly curves" (eprint 2022/352), §5.1 for
 * BN curves: ψ acts on G2 as [p] and u + 1 + up + up² − 2up³ ≡ 0 (mod r),
 * and the paper proves the converse for BN254. One 63-bit multiplication.
 * Tested against the naive check on points in and outside G2.
 */
export function g2IsInSubgroup(q: usize): bool {
  g2MulU64(XQ, q, SEED_U); // [u]Q
  g2AddMixed(LHS, XQ, q); // [u+1]Q
  g2Psi(TMP, XQ);
  g2Add(LHS, LHS, TMP); // + ψ([u]Q)
  g2Psi2(TMP, XQ);
  g2Add(LHS, LHS, TMP); // + ψ²([u]Q)
  g2Double(RHS, XQ); // [2u]Q
  g2Psi2(TMP, RHS);
  g2Psi(RHS, TMP); // ψ³([2u]Q)
  return g2JacobianEq(LHS, RHS);
}

/** Naive membership test [r]q = O; only used to test g2IsInSubgroup. */
export function g2IsInSubgroupNaive(q: usize): bool {
  g2MulScalar(TMP, q, R_BE);
  return g2JacobianIsInfinity(TMP);
}
