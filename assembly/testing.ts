// The test build's entry (build/verifier-test.wasm): every production entry
// point of index.ts, plus the operations the known-answer, property and
// differential tests (test/assembly/) and the cost breakdown of
// bench/verifier.ts --profile call. They share the validation code of the
// verifier and touch no verifier state. The production module does not
// contain them.

export * from "./index";
import { io } from "./index";

import { FP_SIZE, FP_BYTES, fpAdd, fpSub, fpMul, fpInv, fpNeg, fpSqr, fpFromBytes, fpToBytes } from "./fp";
import {
  FP2_SIZE, FP2_BYTES, fp2Add, fp2Sub, fp2Mul, fp2Inv, fp2Sqr, fp2MulByXi, fp2Conj,
  fp2FromBytes, fp2ToBytes,
} from "./fp2";
import {
  FP12_SIZE, fp12Mul, fp12Sqr, fp12Inv, fp12Conj, fp12CyclotomicSqr, fp12ExpByU, fp12SetOne,
  fp12IsOne,
} from "./fp12";
import { fp12Frobenius, fp12Frobenius2, fp12Frobenius3 } from "./frobenius";
import {
  G1_AFFINE_SIZE, G1_JACOBIAN_SIZE, G1_BYTES, G1_Y, DECODE_OK, DECODE_INFINITY,
  g1FromBytes, g1ToBytes, g1AddMixed, g1JacobianFromAffine, g1JacobianIsInfinity, g1ToAffine,
  g1MsmBinary, g1JacobianSetInfinity,
} from "./g1";
import {
  G2_X, G2_Y, G2_AFFINE_SIZE, G2_JACOBIAN_SIZE, G2_BYTES, g2FromBytes, g2IsOnCurve, g2IsInSubgroup,
  g2IsInSubgroupNaive, g2MulScalar, g2JacobianIsInfinity, g2ToAffine, g2ToBytes,
} from "./g2";
import {
  LINES_SIZE, PREP_SIZE, PAIR_SIZE, PAIR_LINES, PAIR_P, prepareLines, prepareG1Affine, batchInvert,
  millerLoop, finalExponentiation,
} from "./pairing";
import { fp6Mul, fp6MulBy01 } from "./fp6";
import { fpAddLazy } from "./fp";
import { STATUS_OK, STATUS_FORMAT, STATUS_POINT, SCALAR_BYTES } from "./layout";
import { scratch, benchStage as benchStageAt } from "./groth16";

/** The I/O buffer (index.ts owns it). */
// @ts-ignore: decorator
@inline function base(): usize {
  return io(0);
}

// --- test support: field arithmetic -------------------------------------------------

const OP_A: usize = 0;
const FA: usize = memory.data(<i32>FP_SIZE, 4);
const FB: usize = memory.data(<i32>FP_SIZE, 4);
const FC: usize = memory.data(<i32>FP_SIZE, 4);

/** Fp: a ‖ b (32 bytes each) → result at 2·32. op: 0 add, 1 sub, 2 mul, 3 inv, 4 neg, 5 sqr. */
export function fpOp(op: i32): i32 {
  const opB = OP_A + FP_BYTES;
  const opOut = opB + FP_BYTES;
  if (!fpFromBytes(FA, base() + OP_A) || !fpFromBytes(FB, base() + opB)) return STATUS_FORMAT;
  if (op == 0) fpAdd(FC, FA, FB);
  else if (op == 1) fpSub(FC, FA, FB);
  else if (op == 2) fpMul(FC, FA, FB);
  else if (op == 3) fpInv(FC, FA);
  else if (op == 4) fpNeg(FC, FA);
  else fpSqr(FC, FA);
  fpToBytes(base() + opOut, FC);
  return STATUS_OK;
}

const F2A: usize = memory.data(<i32>FP2_SIZE, 4);
const F2B: usize = memory.data(<i32>FP2_SIZE, 4);
const F2C: usize = memory.data(<i32>FP2_SIZE, 4);

/** Fp2 (EIP order c1 ‖ c0): a ‖ b → result at 2·64. op: 0 add, 1 sub, 2 mul, 3 inv, 4 sqr, 5 ·ξ, 6 conj. */
export function fp2Op(op: i32): i32 {
  const opB = OP_A + FP2_BYTES;
  const opOut = opB + FP2_BYTES;
  if (!fp2FromBytes(F2A, base() + OP_A) || !fp2FromBytes(F2B, base() + opB)) return STATUS_FORMAT;
  if (op == 0) fp2Add(F2C, F2A, F2B);
  else if (op == 1) fp2Sub(F2C, F2A, F2B);
  else if (op == 2) fp2Mul(F2C, F2A, F2B);
  else if (op == 3) fp2Inv(F2C, F2A);
  else if (op == 4) fp2Sqr(F2C, F2A);
  else if (op == 5) fp2MulByXi(F2C, F2A);
  else fp2Conj(F2C, F2A);
  fp2ToBytes(base() + opOut, F2C);
  return STATUS_OK;
}

const FP12_COEFFS: usize = FP12_SIZE / FP_SIZE;
const FP12_BYTES: usize = FP12_COEFFS * FP_BYTES;
const F12A: usize = memory.data(<i32>FP12_SIZE, 4);
const F12B: usize = memory.data(<i32>FP12_SIZE, 4);
const F12C: usize = memory.data(<i32>FP12_SIZE, 4);

/** Fp12 in memory order (12 Fp, c0.b0.c0 first), 32-byte big-endian each. */
function fp12FromBytes(out: usize, src: usize): bool {
  for (let i: usize = 0; i < FP12_COEFFS; i++) {
    if (!fpFromBytes(out + i * FP_SIZE, src + i * FP_BYTES)) return false;
  }
  return true;
}
function fp12ToBytes(dst: usize, a: usize): void {
  for (let i: usize = 0; i < FP12_COEFFS; i++) fpToBytes(dst + i * FP_BYTES, a + i * FP_SIZE);
}

/**
 * Fp12: a ‖ b (384 bytes each) → result at 2·384. op: 0 mul, 1 sqr,
 * 2 frobenius p, 3 p², 4 p³, 5 inv, 6 cyclotomic sqr, 7 final exponentiation,
 * 8 conj, 9 ^u, 10 a^e with e the expLen big-endian bytes after the result.
 */
export function fp12Op(op: i32, expLen: i32): i32 {
  const opB = OP_A + FP12_BYTES;
  const opOut = opB + FP12_BYTES;
  const opExp = opOut + FP12_BYTES;
  if (!fp12FromBytes(F12A, base() + OP_A) || !fp12FromBytes(F12B, base() + opB)) return STATUS_FORMAT;
  if (op == 0) fp12Mul(F12C, F12A, F12B);
  else if (op == 1) fp12Sqr(F12C, F12A);
  else if (op == 2) fp12Frobenius(F12C, F12A);
  else if (op == 3) fp12Frobenius2(F12C, F12A);
  else if (op == 4) fp12Frobenius3(F12C, F12A);
  else if (op == 5) fp12Inv(F12C, F12A);
  else if (op == 6) fp12CyclotomicSqr(F12C, F12A);
  else if (op == 7) finalExponentiation(F12C, F12A);
  else if (op == 8) fp12Conj(F12C, F12A);
  else if (op == 9) fp12ExpByU(F12C, F12A);
  else {
    fp12SetOne(F12C);
    for (let i = 0; i < expLen; i++) {
      const byte = load<u8>(base() + opExp + <usize>i);
      for (let bit = 7; bit >= 0; bit--) {
        fp12Sqr(F12C, F12C);
        if ((byte >> (bit as u8)) & 1) fp12Mul(F12C, F12C, F12A);
      }
    }
  }
  fp12ToBytes(base() + opOut, F12C);
  return STATUS_OK;
}

// --- test support: curves (EIP-196 / EIP-197 semantics) ---------------------------------

const P1: usize = memory.data(<i32>G1_AFFINE_SIZE, 4);
const P2: usize = memory.data(<i32>G1_AFFINE_SIZE, 4);
const JP: usize = memory.data(<i32>G1_JACOBIAN_SIZE, 4);

/** Decodes G1 with (0, 0) as infinity into JP (Jacobian); false when invalid. */
function g1Eip(src: usize, affine: usize): bool {
  const s = g1FromBytes(affine, src);
  return s == DECODE_OK || s == DECODE_INFINITY;
}
function writeG1(dst: usize, j: usize): void {
  if (g1JacobianIsInfinity(j)) {
    memory.fill(dst, 0, G1_BYTES);
    return;
  }
  g1ToAffine(P1, j);
  g1ToBytes(dst, P1);
}

/** EIP-196 ECADD: two G1 points (128 bytes) → sum at 128. −1 when an input is invalid. */
export function g1Add(): i32 {
  const opOut = 2 * G1_BYTES;
  const sa = g1FromBytes(P1, base());
  const sb = g1FromBytes(P2, base() + G1_BYTES);
  if ((sa != DECODE_OK && sa != DECODE_INFINITY) || (sb != DECODE_OK && sb != DECODE_INFINITY)) return -1;
  if (sa == DECODE_INFINITY) g1JacobianSetInfinity(JP);
  else g1JacobianFromAffine(JP, P1);
  if (sb == DECODE_OK) g1AddMixed(JP, JP, P2);
  writeG1(base() + opOut, JP);
  return 0;
}

/** EIP-196 ECMUL: G1 point ‖ 32-byte scalar (any 256-bit value) → product at 96. */
export function g1Mul(): i32 {
  const opScalar = G1_BYTES;
  const opOut = G1_BYTES + SCALAR_BYTES;
  const s = g1FromBytes(P1, base());
  if (s != DECODE_OK && s != DECODE_INFINITY) return -1;
  if (s == DECODE_INFINITY) g1JacobianSetInfinity(JP);
  else g1MsmBinary(JP, P1, 0, base() + opScalar, 1, 256);
  writeG1(base() + opOut, JP);
  return 0;
}

const Q1: usize = memory.data(<i32>G2_AFFINE_SIZE, 4);
const JQ: usize = memory.data(<i32>G2_JACOBIAN_SIZE, 4);

/**
 * G2 helpers on an on-curve point (not necessarily in G2) in the I/O buffer:
 * op 0 fast subgroup test, 1 naive [r]Q = O, 2 [s]Q with s at 128 → affine at
 * 160 (zeros for infinity), 3 full decode status (DECODE_* codes).
 * −1 when the point is not canonical or not on the curve (ops 0–2).
 */
export function g2Op(op: i32): i32 {
  const opScalar = G2_BYTES;
  const opOut = G2_BYTES + SCALAR_BYTES;
  if (op == 3) return g2FromBytes(Q1, base());
  if (!fp2FromBytes(Q1 + G2_X, base()) || !fp2FromBytes(Q1 + G2_Y, base() + FP2_BYTES)) return -1;
  if (!g2IsOnCurve(Q1)) return -1;
  if (op == 0) return g2IsInSubgroup(Q1) ? 1 : 0;
  if (op == 1) return g2IsInSubgroupNaive(Q1) ? 1 : 0;
  g2MulScalar(JQ, Q1, base() + opScalar);
  if (g2JacobianIsInfinity(JQ)) memory.fill(base() + opOut, 0, G2_BYTES);
  else {
    g2ToAffine(Q1, JQ);
    g2ToBytes(base() + opOut, Q1);
  }
  return 0;
}

const PAIR_BYTES: usize = G1_BYTES + G2_BYTES;
const F: usize = memory.data(<i32>FP12_SIZE, 4);

/**
 * Multi-pairing over k (G1 ‖ G2) pairs from the I/O buffer, EIP-197
 * semantics: pairs with an infinity point contribute 1. Writes the product
 * of the reduced pairings to out (Fp12). Returns STATUS_OK or the failing status.
 */
function multiPairing(out: usize, k: i32): i32 {
  const size = <usize>k * (G1_AFFINE_SIZE + G2_AFFINE_SIZE + LINES_SIZE + PREP_SIZE + PAIR_SIZE + 2 * FP_SIZE);
  const g1s = scratch(size);
  const g2s = g1s + <usize>k * G1_AFFINE_SIZE;
  const lines = g2s + <usize>k * G2_AFFINE_SIZE;
  const prep = lines + <usize>k * LINES_SIZE;
  const pairs = prep + <usize>k * PREP_SIZE;
  const invs = pairs + <usize>k * PAIR_SIZE;
  const invScratch = invs + <usize>k * FP_SIZE;
  let m = 0;
  for (let i = 0; i < k; i++) {
    const src = base() + <usize>i * PAIR_BYTES;
    const g1 = g1s + <usize>m * G1_AFFINE_SIZE;
    const g2 = g2s + <usize>m * G2_AFFINE_SIZE;
    const s1 = g1FromBytes(g1, src);
    const s2 = g2FromBytes(g2, src + G1_BYTES);
    if (s1 != DECODE_OK && s1 != DECODE_INFINITY) return s1 == 1 ? STATUS_FORMAT : STATUS_POINT;
    if (s2 != DECODE_OK && s2 != DECODE_INFINITY) return s2 == 1 ? STATUS_FORMAT : STATUS_POINT;
    if (s1 == DECODE_INFINITY || s2 == DECODE_INFINITY) continue;
    memory.copy(invs + <usize>m * FP_SIZE, g1 + G1_Y, FP_SIZE);
    m++;
  }
  batchInvert(invs, FP_SIZE, m, invScratch);
  for (let i = 0; i < m; i++) {
    const p = prep + <usize>i * PREP_SIZE;
    const l = lines + <usize>i * LINES_SIZE;
    prepareG1Affine(p, g1s + <usize>i * G1_AFFINE_SIZE, invs + <usize>i * FP_SIZE);
    prepareLines(l, g2s + <usize>i * G2_AFFINE_SIZE);
    store<u32>(pairs + <usize>i * PAIR_SIZE + PAIR_LINES, l as u32);
    store<u32>(pairs + <usize>i * PAIR_SIZE + PAIR_P, p as u32);
  }
  millerLoop(F, pairs, m, 0);
  finalExponentiation(out, F);
  return STATUS_OK;
}

/** EIP-197 pairing check over k pairs: 1 if the product is 1, 0 if not, −1 for invalid input. */
export function pairingCheck(k: i32): i32 {
  if (k < 0) return -1;
  if (multiPairing(F12C, k) != STATUS_OK) return -1;
  return fp12IsOne(F12C) ? 1 : 0;
}

/** e(P, Q) for one pair (G1 ‖ G2) → Fp12 (memory order, 384 bytes) after the pair. */
export function pairing(): i32 {
  const s = multiPairing(F12C, 1);
  if (s != STATUS_OK) return s;
  fp12ToBytes(base() + PAIR_BYTES, F12C);
  return STATUS_OK;
}


// --- test support: raw limbs (lazy-reduction bounds) ------------------------------

const F2_RAW_BYTES: usize = FP2_SIZE;

/**
 * fp2Mul on operands given as raw limbs, not through the canonical codec, so
 * that the tests can feed the non-reduced values (< 4p) that lazy additions
 * produce: a ‖ b (FP2_SIZE bytes each: 9 little-endian u32 limbs of c0, then
 * of c1, Montgomery form) → a·b raw at 2·FP2_SIZE.
 */
export function fp2MulRaw(): void {
  const a = base();
  fp2Mul(a + 2 * F2_RAW_BYTES, a, a + F2_RAW_BYTES);
}

/** fp2Sqr on raw limbs, as fp2MulRaw: a (coefficients < 2p) → a² raw at 2·FP2_SIZE. */
export function fp2SqrRaw(): void {
  const a = base();
  fp2Sqr(a + 2 * F2_RAW_BYTES, a);
}

// --- benchmark support ----------------------------------------------------------

/**
 * Runs n iterations of one primitive on fixed operands (for bench/verifier.ts
 * cost breakdowns): 0 fpMul, 1 fpAdd, 2 fpSub, 3 fp2Mul, 4 fp2Sqr, 5 fp12Mul,
 * 6 fp12Sqr, 7 fp12CyclotomicSqr, 8 final exponentiation, 9 fpInv, 10 copy of 72 bytes,
 * 11 fp12ExpByU, 12 fp12Frobenius, 13 fp12Inv, 14 fp6Mul, 15 fp6MulBy01, 16 fpAddLazy, 17 fpSqr.
 */
export function benchOp(op: i32, n: i32): void {
  for (let i = 0; i < n; i++) {
    if (op == 0) fpMul(FA, FA, FB);
    else if (op == 1) fpAdd(FA, FA, FB);
    else if (op == 2) fpSub(FA, FA, FB);
    else if (op == 3) fp2Mul(F2A, F2A, F2B);
    else if (op == 4) fp2Sqr(F2A, F2A);
    else if (op == 5) fp12Mul(F12A, F12A, F12B);
    else if (op == 6) fp12Sqr(F12A, F12A);
    else if (op == 7) fp12CyclotomicSqr(F12A, F12A);
    else if (op == 8) finalExponentiation(F12C, F12A);
    else if (op == 9) fpInv(FA, FA);
    else if (op == 10) memory.copy(F2C, F2A, FP2_SIZE);
    else if (op == 11) fp12ExpByU(F12C, F12A);
    else if (op == 12) fp12Frobenius(F12C, F12A);
    else if (op == 13) fp12Inv(F12C, F12A);
    else if (op == 14) fp6Mul(F12C, F12A, F12B);
    else if (op == 15) fp6MulBy01(F12C, F12A, F2A, F2B);
    else if (op == 17) fpSqr(FA, FA);
    else fpAddLazy(FC, FA, FB);
  }
}

/** See groth16.ts benchStage; the I/O buffer must still hold the last verified proof. */
export function benchStage(stage: i32): void {
  benchStageAt(base(), stage);
}

/**
 * fpMul on raw limbs (for the differential tests of the two builds, whose
 * fpMul differs: test/assembly/wide.test.ts): a ‖ b (9 little-endian u32
 * limbs each, Montgomery form, any value < 8p with limbs 0..7 below 2^29, as
 * lazy sums are) → a·b·2^−261 mod p raw at 2·FP_SIZE.
 */
export function fpMulRaw(): void {
  const a = base();
  fpMul(a + 2 * FP_SIZE, a, a + FP_SIZE);
}

/** fpSqr on raw limbs, as fpMulRaw: a → a²·2^−261 mod p raw at 2·FP_SIZE (the wide build's squaring is its own code). */
export function fpSqrRaw(): void {
  const a = base();
  fpSqr(a + 2 * FP_SIZE, a);
}

/**
 * fp6Mul on raw limbs (the wide build's is its own kernel: test/assembly/wide-tower.test.ts):
 * a ‖ b (six coefficients of 9 little-endian u32 limbs each, Montgomery form, lazy sums
 * with limbs 0..7 below 2^29) → a·b raw at 2·FP6_SIZE.
 */
export function fp6MulRaw(): void {
  const a = base();
  fp6Mul(a + 12 * FP_SIZE, a, a + 6 * FP_SIZE);
}
