// The optimal ate pairing on BN254 (Vercauteren 2010, "Optimal pairings"):
//   e(P, Q) = ( f_{6u+2,Q}(P) · ℓ_{[6u+2]Q, π(Q)}(P) · ℓ_{.., −π²(Q)}(P) )^((p¹²−1)/r)
// with the Miller loop over the NAF of 6u+2 (65 doublings' worth of lines) as
// in Beuchat, González-Díaz, Mitsunari, Okamoto, Rodríguez-Henríquez,
// Teruya 2010, "High-speed software implementation of the optimal ate
// pairing over Barreto–Naehrig curves", Algorithm 1.
//
// Lines. With the untwisting (x', y') ↦ (x'·w², y'·w³) a line through T with
// slope λ' on E' evaluated at P = (xP, yP) ∈ E(Fp) is
//     ℓ(P) = yP − λ'·xP·w + (λ'·xT − yT)·v·w,
// sparse in Fp12 (coefficients z0, z1, z3). Factors in a proper subfield are
// erased by the final exponentiation, so lines may be scaled freely by
// Fp2 constants (projective formulas) and by 1/yP: the verifier prepares each
// G1 point once as P̃ = (xP/yP, 1/yP) and a line (a, b, c) contributes
//     a + b·(xP/yP)·w + c·(1/yP)·v·w.
// Lines of a G2 point can therefore be computed without P, once per point:
//  * fixed points (γ, δ, β of a verification key): affine, a = 1, stored as
//    (b, c) = (−λ', λ'xT − yT) — FIXED_LINE_SIZE bytes per line;
//  * per-proof points (B): homogeneous projective, no inversions, stored as
//    (a, b, c) — LINE_SIZE bytes per line (Costello–Lange–Naehrig 2010,
//    "Faster pairing computations on curves with high-degree twists";
//    Aranha, Karabina, Longa, Gebotys, López 2011, §4, D-type twist).
// A multi-Miller loop then shares the Fp12 squarings across all pairs.
//
// Final exponentiation: easy part f^((p⁶−1)(p²+1)), then the hard part
// (p⁴−p²+1)/r by the addition chain of Scott, Benger, Charlemagne, Dominguez
// Perez, Kachisa 2009, "On the final exponentiation for calculating pairings
// on ordinary elliptic curves", §5 (BN), with cyclotomic squarings
// (Granger–Scott 2010) inside the three exponentiations by u.

import { FP_SIZE, fpMul, fpSqr, fpInv, fpCopy, fpNeg } from "./fp";
import {
  FP2_SIZE, fp2Add, fp2Sub, fp2Mul, fp2Sqr, fp2Double, fp2Inv, fp2Neg, fp2MulFp, fp2Copy,
  fp2SetOne, fp2Conj, fp2Triple, fp2Quadruple, fp2Sub2, fp2SubTwelve,
} from "./fp2";
import {
  FP12_SIZE, fp12Mul, fp12Sqr, fp12Conj, fp12Inv, fp12MulBy034, fp12MulBy034One, fp12SetOne,
  fp12CyclotomicSqr, fp12ExpByU, fp12Copy,
} from "./fp12";
import { fp12Frobenius, fp12Frobenius2, fp12Frobenius3, psiX, psiY, psi2X, psi2Y } from "./frobenius";
import { G2_X, G2_Y, G2_AFFINE_SIZE, g2AffineNeg } from "./g2";
import { G1_X, G1_Y, G1_Z } from "./g1";
import { ATE_NAF, ATE_NAF_LEN, ATE_LINES, TWIST_B } from "./constants";

// --- line storage ------------------------------------------------------------

/** Projective line: a·yP-part, b·xP-part, c (see header). */
export const LINE_A: usize = 0;
export const LINE_B: usize = FP2_SIZE;
export const LINE_C: usize = 2 * FP2_SIZE;
export const LINE_SIZE: usize = 3 * FP2_SIZE;
/** All lines of one G2 point for the projective (per-proof) form. */
export const LINES_SIZE: usize = <usize>ATE_LINES * LINE_SIZE;
/** Affine (fixed) line: a = 1 implied. */
export const FIXED_LINE_B: usize = 0;
export const FIXED_LINE_C: usize = FP2_SIZE;
export const FIXED_LINE_SIZE: usize = 2 * FP2_SIZE;
export const FIXED_LINES_SIZE: usize = <usize>ATE_LINES * FIXED_LINE_SIZE;

/** Prepared G1 point P̃ = (xP/yP, 1/yP). */
export const PREP_X: usize = 0;
export const PREP_Y: usize = FP_SIZE;
export const PREP_SIZE: usize = 2 * FP_SIZE;

/** Pair table entry for millerLoop: pointer to lines, pointer to prepared G1. */
export const PAIR_LINES: usize = 0;
export const PAIR_P: usize = 4;
export const PAIR_SIZE: usize = 8;

// --- fixed lines (affine) ----------------------------------------------------

const FT: usize = memory.data(<i32>G2_AFFINE_SIZE, 4); // T = (x, y)
const FL: usize = memory.data(<i32>FP2_SIZE, 4); // λ'
const FS: usize = memory.data(<i32>FP2_SIZE, 4);
const FX: usize = memory.data(<i32>FP2_SIZE, 4);

/** Writes the affine line through T (tangent when q == T) and sets T ← T + q. */
function fixedStep(dst: usize, q: usize, doubling: bool): void {
  if (doubling) {
    fp2Sqr(FS, FT + G2_X);
    fp2Double(FL, FS);
    fp2Add(FS, FL, FS); // 3x²
    fp2Double(FL, FT + G2_Y);
    fp2Inv(FL, FL);
    fp2Mul(FL, FL, FS); // λ' = 3x² / 2y
  } else {
    fp2Sub(FS, q + G2_Y, FT + G2_Y);
    fp2Sub(FL, q + G2_X, FT + G2_X);
    fp2Inv(FL, FL);
    fp2Mul(FL, FL, FS); // λ' = (yQ − yT) / (xQ − xT)
  }
  fp2Neg(dst + FIXED_LINE_B, FL); // b = −λ'
  fp2Mul(FS, FL, FT + G2_X);
  fp2Sub(dst + FIXED_LINE_C, FS, FT + G2_Y); // c = λ'·xT − yT
  // x' = λ'² − xT − xQ, y' = λ'(xT − x') − yT
  fp2Sqr(FX, FL);
  fp2Sub(FX, FX, FT + G2_X);
  fp2Sub(FX, FX, doubling ? FT + G2_X : q + G2_X);
  fp2Sub(FS, FT + G2_X, FX);
  fp2Mul(FS, FS, FL);
  fp2Sub(FT + G2_Y, FS, FT + G2_Y);
  fp2Copy(FT + G2_X, FX);
}

const NEG_Q: usize = memory.data(<i32>G2_AFFINE_SIZE, 4);
const FROB_Q: usize = memory.data(<i32>G2_AFFINE_SIZE, 4);

/** Sets FROB_Q = π(q) (step 1) or −π²(q) (step 2), affine. */
function frobeniusAddend(q: usize, step: i32): void {
  if (step == 1) {
    psiX(FROB_Q + G2_X, q + G2_X);
    psiY(FROB_Q + G2_Y, q + G2_Y);
  } else {
    psi2X(FROB_Q + G2_X, q + G2_X);
    psi2Y(FROB_Q + G2_Y, q + G2_Y);
    fp2Neg(FROB_Q + G2_Y, FROB_Q + G2_Y);
  }
}

/**
 * Precomputes the ATE_LINES affine lines of an affine G2 point q (in G2,
 * not infinity) into dst (FIXED_LINES_SIZE bytes). Costs one Fp2 inversion
 * per line: done once per verification key.
 */
export function prepareFixedLines(dst: usize, q: usize): void {
  memory.copy(FT, q, G2_AFFINE_SIZE);
  g2AffineNeg(NEG_Q, q);
  let line = dst;
  for (let i = ATE_NAF_LEN - 2; i >= 0; i--) {
    fixedStep(line, 0, true);
    line += FIXED_LINE_SIZE;
    const d = load<i8>(ATE_NAF + <usize>i);
    if (d != 0) {
      fixedStep(line, d > 0 ? q : NEG_Q, false);
      line += FIXED_LINE_SIZE;
    }
  }
  frobeniusAddend(q, 1);
  fixedStep(line, FROB_Q, false);
  line += FIXED_LINE_SIZE;
  frobeniusAddend(q, 2);
  fixedStep(line, FROB_Q, false);
}

// --- per-proof lines (homogeneous projective) --------------------------------

const PX: usize = memory.data(<i32>FP2_SIZE, 4);
const PY: usize = memory.data(<i32>FP2_SIZE, 4);
const PZ: usize = memory.data(<i32>FP2_SIZE, 4);
const SA: usize = memory.data(<i32>FP2_SIZE, 4);
const SB: usize = memory.data(<i32>FP2_SIZE, 4);
const SC: usize = memory.data(<i32>FP2_SIZE, 4);
const SE: usize = memory.data(<i32>FP2_SIZE, 4);
const SF: usize = memory.data(<i32>FP2_SIZE, 4);
const SH: usize = memory.data(<i32>FP2_SIZE, 4);

/**
 * Doubling step on T = (PX : PY : PZ) (homogeneous, x = X/Z, y = Y/Z) with
 * its tangent line; Aranha et al. 2011, eq. (10), scaled by 4 to avoid the
 * two halvings (homogeneous coordinates are defined up to a factor):
 *   B = Y², C = Z², E = 3b'·C, F = 3E, H = 2YZ
 *   X3 = 2XY(B − F), Y3 = (B + F)² − 12E², Z3 = 4B·H
 *   line: a = −H, b = 3X², c = E − B
 */
function doublingStep(dst: usize): void {
  fp2Sqr(SB, PY); // B = Y²
  fp2Sqr(SC, PZ); // C = Z²
  fp2Triple(SE, SC);
  fp2Mul(SE, SE, TWIST_B); // E = 3b'Z²
  fp2Triple(SF, SE); // F = 3E
  fp2Add(SH, PY, PZ);
  fp2Sqr(SH, SH);
  fp2Sub2(SH, SH, SB, SC); // H = (Y + Z)² − B − C = 2YZ
  // line
  fp2Neg(dst + LINE_A, SH); // a = −2YZ
  fp2Sqr(SA, PX);
  fp2Triple(dst + LINE_B, SA); // b = 3X²
  fp2Sub(dst + LINE_C, SE, SB); // c = 3b'Z² − Y²
  // point
  fp2Mul(SA, PX, PY);
  fp2Double(SA, SA); // 2XY
  fp2Sub(SC, SB, SF);
  fp2Mul(PX, SA, SC); // X3 = 2XY(B − F)
  fp2Add(SC, SB, SF);
  fp2Sqr(SC, SC); // (B + F)²
  fp2Sqr(SE, SE);
  fp2SubTwelve(PY, SC, SE); // Y3 = (B + F)² − 12E²
  fp2Mul(PZ, SB, SH);
  fp2Quadruple(PZ, PZ); // Z3 = 4BH
}

/**
 * Mixed addition step T ← T + q (q affine) with the chord line; Aranha et
 * al. 2011, eq. (12):
 *   θ = Y − yq·Z, λ = X − xq·Z, C = θ², D = λ², E = λ³, F = Z·C, G = X·D,
 *   H = E + F − 2G, X3 = λH, Y3 = θ(G − H) − E·Y, Z3 = Z·E
 *   line: a = λ, b = −θ, c = θ·xq − λ·yq
 */
function additionStep(dst: usize, q: usize): void {
  fp2Mul(SA, q + G2_Y, PZ);
  fp2Sub(SA, PY, SA); // θ
  fp2Mul(SB, q + G2_X, PZ);
  fp2Sub(SB, PX, SB); // λ
  // line
  fp2Copy(dst + LINE_A, SB);
  fp2Neg(dst + LINE_B, SA);
  fp2Mul(SC, SA, q + G2_X);
  fp2Mul(SE, SB, q + G2_Y);
  fp2Sub(dst + LINE_C, SC, SE);
  // point
  fp2Sqr(SC, SA); // C = θ²
  fp2Sqr(SE, SB); // D = λ²
  fp2Mul(SF, SE, SB); // E = λ³
  fp2Mul(SE, SE, PX); // G = X·D
  fp2Mul(SC, SC, PZ); // F = Z·C
  fp2Add(SH, SF, SC);
  fp2Sub(SH, SH, SE);
  fp2Sub(SH, SH, SE); // H = E + F − 2G
  fp2Mul(PX, SB, SH); // X3 = λH
  fp2Sub(SE, SE, SH);
  fp2Mul(SE, SE, SA); // θ(G − H)
  fp2Mul(SC, SF, PY);
  fp2Sub(PY, SE, SC); // Y3 = θ(G − H) − E·Y
  fp2Mul(PZ, PZ, SF); // Z3 = Z·E
}

/** Precomputes the ATE_LINES projective lines of an affine G2 point q into dst (LINES_SIZE bytes). */
export function prepareLines(dst: usize, q: usize): void {
  fp2Copy(PX, q + G2_X);
  fp2Copy(PY, q + G2_Y);
  fp2SetOne(PZ);
  g2AffineNeg(NEG_Q, q);
  let line = dst;
  for (let i = ATE_NAF_LEN - 2; i >= 0; i--) {
    doublingStep(line);
    line += LINE_SIZE;
    const d = load<i8>(ATE_NAF + <usize>i);
    if (d != 0) {
      additionStep(line, d > 0 ? q : NEG_Q);
      line += LINE_SIZE;
    }
  }
  frobeniusAddend(q, 1);
  additionStep(line, FROB_Q);
  line += LINE_SIZE;
  frobeniusAddend(q, 2);
  additionStep(line, FROB_Q);
}

// --- G1 preparation ----------------------------------------------------------

/** out = P̃ for an affine P given 1/yP. */
export function prepareG1Affine(out: usize, p: usize, yInv: usize): void {
  fpMul(out + PREP_X, p + G1_X, yInv);
  fpCopy(out + PREP_Y, yInv);
}

const PJ: usize = memory.data(<i32>FP_SIZE, 4);

/** out = P̃ for a Jacobian P = (X, Y, Z) given 1/Y: xP/yP = X·Z/Y, 1/yP = Z³/Y. */
export function prepareG1Jacobian(out: usize, p: usize, yInv: usize): void {
  fpMul(PJ, p + G1_Z, yInv);
  fpMul(out + PREP_X, p + G1_X, PJ);
  fpSqr(PJ, p + G1_Z);
  fpMul(PJ, PJ, p + G1_Z);
  fpMul(out + PREP_Y, PJ, yInv);
}

/** out = P̃ of −P. */
export function prepareNeg(out: usize, a: usize): void {
  fpNeg(out + PREP_X, a + PREP_X);
  fpNeg(out + PREP_Y, a + PREP_Y);
}

// Montgomery's simultaneous inversion (Montgomery 1987), shared by callers
// that must invert several field elements: 3(n−1) multiplications + 1 inversion.
const BI_ACC: usize = memory.data(<i32>FP_SIZE, 4);
const BI_T: usize = memory.data(<i32>FP_SIZE, 4);

/**
 * Inverts n field elements in place: the elements are at base + k·stride,
 * scratch must hold n·FP_SIZE bytes. No element may be zero.
 */
export function batchInvert(base: usize, stride: usize, n: i32, scratch: usize): void {
  if (n <= 0) return;
  fpCopy(BI_ACC, base);
  fpCopy(scratch, BI_ACC);
  for (let k = 1; k < n; k++) {
    fpMul(BI_ACC, BI_ACC, base + <usize>k * stride);
    fpCopy(scratch + <usize>k * FP_SIZE, BI_ACC); // prefix products
  }
  fpInv(BI_ACC, BI_ACC);
  for (let k = n - 1; k > 0; k--) {
    const e = base + <usize>k * stride;
    fpMul(BI_T, BI_ACC, scratch + <usize>(k - 1) * FP_SIZE); // 1/e_k
    fpMul(BI_ACC, BI_ACC, e); // 1/(e_0 … e_{k−1})
    fpCopy(e, BI_T);
  }
  fpCopy(base, BI_ACC);
}

// --- Miller loop -------------------------------------------------------------

const LB: usize = memory.data(<i32>FP2_SIZE, 4);
const LC: usize = memory.data(<i32>FP2_SIZE, 4);

// @ts-ignore: decorator
@inline function pairLines(table: usize, k: i32): usize {
  return load<u32>(table + <usize>k * PAIR_SIZE + PAIR_LINES) as usize;
}
// @ts-ignore: decorator
@inline function pairP(table: usize, k: i32): usize {
  return load<u32>(table + <usize>k * PAIR_SIZE + PAIR_P) as usize;
}

/** Multiplies line number `index` of every pair into f. */
function mulLines(f: usize, table: usize, nVar: i32, nFixed: i32, index: usize): void {
  for (let k = 0; k < nVar; k++) {
    const line = pairLines(table, k) + index * LINE_SIZE;
    const p = pairP(table, k);
    fp2MulFp(LB, line + LINE_B, p + PREP_X);
    fp2MulFp(LC, line + LINE_C, p + PREP_Y);
    fp12MulBy034(f, line + LINE_A, LB, LC);
  }
  for (let k = nVar; k < nVar + nFixed; k++) {
    const line = pairLines(table, k) + index * FIXED_LINE_SIZE;
    const p = pairP(table, k);
    fp2MulFp(LB, line + FIXED_LINE_B, p + PREP_X);
    fp2MulFp(LC, line + FIXED_LINE_C, p + PREP_Y);
    fp12MulBy034One(f, LB, LC);
  }
}

/**
 * f = Π_k f_{6u+2,Q_k}(P_k)·(Frobenius lines), for nVar pairs with projective
 * lines followed by nFixed pairs with affine lines, described by the pair
 * table (PAIR_SIZE bytes per pair). One Fp12 squaring per NAF digit is
 * shared by all pairs.
 */
export function millerLoop(f: usize, table: usize, nVar: i32, nFixed: i32): void {
  fp12SetOne(f);
  let index: usize = 0;
  for (let i = ATE_NAF_LEN - 2; i >= 0; i--) {
    if (i != ATE_NAF_LEN - 2) fp12Sqr(f, f); // f = 1 before the first step
    mulLines(f, table, nVar, nFixed, index++);
    if (load<i8>(ATE_NAF + <usize>i) != 0) mulLines(f, table, nVar, nFixed, index++);
  }
  mulLines(f, table, nVar, nFixed, index++);
  mulLines(f, table, nVar, nFixed, index);
}

// --- final exponentiation ----------------------------------------------------

const E_T0: usize = memory.data(<i32>FP12_SIZE, 4);
const E_T1: usize = memory.data(<i32>FP12_SIZE, 4);
const FU: usize = memory.data(<i32>FP12_SIZE, 4);
const FU2: usize = memory.data(<i32>FP12_SIZE, 4);
const FU3: usize = memory.data(<i32>FP12_SIZE, 4);
const Y0: usize = memory.data(<i32>FP12_SIZE, 4);
const Y1: usize = memory.data(<i32>FP12_SIZE, 4);
const Y2: usize = memory.data(<i32>FP12_SIZE, 4);
const Y3: usize = memory.data(<i32>FP12_SIZE, 4);
const Y4: usize = memory.data(<i32>FP12_SIZE, 4);
const Y5: usize = memory.data(<i32>FP12_SIZE, 4);
const Y6: usize = memory.data(<i32>FP12_SIZE, 4);

/** out = f^((p¹²−1)/r). f must be non-zero (Miller-loop outputs are). */
export function finalExponentiation(out: usize, f: usize): void {
  // Easy part: f ← f^(p⁶−1) = f̄·f⁻¹, then f ← f^(p²+1). The result lies in
  // the cyclotomic subgroup, where conjugation inverts.
  fp12Inv(E_T0, f);
  fp12Conj(E_T1, f);
  fp12Mul(E_T1, E_T1, E_T0);
  fp12Frobenius2(E_T0, E_T1);
  fp12Mul(E_T1, E_T1, E_T0); // t = f^((p⁶−1)(p²+1))
  // Hard part (Scott et al. 2009, §5): with f^u, f^u², f^u³,
  //   y0 = f^p·f^(p²)·f^(p³), y1 = f̄, y2 = (f^u²)^(p²), y3 = conj((f^u)^p),
  //   y4 = conj(f^u·(f^u²)^p), y5 = conj(f^u²), y6 = conj(f^u³·(f^u³)^p),
  // combined as y0·y1²·y2⁶·y3¹²·y4¹⁸·y5³⁰·y6³⁶ by the chain below.
  fp12ExpByU(FU, E_T1);
  fp12ExpByU(FU2, FU);
  fp12ExpByU(FU3, FU2);
  fp12Frobenius(Y0, E_T1);
  fp12Frobenius2(Y1, E_T1);
  fp12Mul(Y0, Y0, Y1);
  fp12Frobenius3(Y1, E_T1);
  fp12Mul(Y0, Y0, Y1); // y0
  fp12Conj(Y1, E_T1); // y1
  fp12Frobenius2(Y2, FU2); // y2
  fp12Frobenius(Y3, FU);
  fp12Conj(Y3, Y3); // y3
  fp12Frobenius(Y4, FU2);
  fp12Mul(Y4, Y4, FU);
  fp12Conj(Y4, Y4); // y4
  fp12Conj(Y5, FU2); // y5
  fp12Frobenius(Y6, FU3);
  fp12Mul(Y6, Y6, FU3);
  fp12Conj(Y6, Y6); // y6
  fp12CyclotomicSqr(E_T0, Y6);
  fp12Mul(E_T0, E_T0, Y4);
  fp12Mul(E_T0, E_T0, Y5); // t0 = y6²·y4·y5
  fp12Mul(E_T1, Y3, Y5);
  fp12Mul(E_T1, E_T1, E_T0); // t1 = y3·y5·t0
  fp12Mul(E_T0, E_T0, Y2); // t0 = t0·y2
  fp12CyclotomicSqr(E_T1, E_T1);
  fp12Mul(E_T1, E_T1, E_T0);
  fp12CyclotomicSqr(E_T1, E_T1); // t1 = (t1²·t0)²
  fp12Mul(E_T0, E_T1, Y1); // t0 = t1·y1
  fp12Mul(E_T1, E_T1, Y0); // t1 = t1·y0
  fp12CyclotomicSqr(E_T0, E_T0);
  fp12Mul(out, E_T0, E_T1); // t0²·t1
}
