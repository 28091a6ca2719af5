// Groth16 verification (Groth 2016, "On the size of pairing-based
// non-interactive arguments", §3.2) specialised to a fixed verification key:
//
//   e(A, B) · e(−vk_x, γ) · e(−C, δ) = e(α, β),   vk_x = IC₀ + Σ sⱼ·ICⱼ
//
// At key load: e(α, β) is computed once, the affine Miller-loop lines of γ,
// δ and β are precomputed, and each ICⱼ gets a table of its multiples 1..15.
// Per proof: one projective line set for B, one multi-Miller loop over three
// pairs (two with fixed lines), one final exponentiation, and a 4-bit Straus
// MSM for vk_x.
//
// Batch (Bellare, Garay, Rabin 1998 small-exponent test; as used for Groth16
// by e.g. Zcash's bellman): with random 128-bit ρᵢ,
//   Π e(ρᵢAᵢ, Bᵢ) · e(−Σρᵢ·vk_xᵢ, γ) · e(−ΣρᵢCᵢ, δ) · e(−(Σρᵢ)·α, β) = 1,
// one final exponentiation for the whole batch; a false batch with one bad
// proof passes with probability ≤ 2⁻¹²⁸. The ρᵢ and the combined public
// scalars (computed mod r by the caller) come in through the I/O buffer.
//
// Every input is validated here: coordinates < p, points on the curve, B in
// G2, no point at infinity, public inputs < r. Status codes are the ABI's.

import { FP_SIZE, FP_BYTES, readWordsBE, wordsLessThan, fpIsZero, fpFromBytes, fpMul, fpSqr } from "./fp";
import { fp2Eq } from "./fp2";
import { fp12Eq, fp12IsOne } from "./fp12";
import {
  G1_X, G1_Y, G1_Z, G1_AFFINE_SIZE, G1_JACOBIAN_SIZE, G1_BYTES, DECODE_OK, DECODE_NONCANONICAL,
  g1FromBytes, g1AddMixed, g1Double, g1JacobianSetInfinity, g1JacobianIsInfinity, g1MsmBinary,
  g1JacobianFromAffine, g1ToAffine,
} from "./g1";
import { G2_X, G2_Y, G2_AFFINE_SIZE, G2_BYTES, g2FromBytes, g2IsInSubgroup } from "./g2";
import {
  LINES_SIZE, FIXED_LINES_SIZE, PREP_SIZE, PAIR_SIZE, PAIR_LINES, PAIR_P,
  prepareFixedLines, prepareLines, prepareG1Affine, prepareG1Jacobian, prepareNeg, batchInvert,
  millerLoop, finalExponentiation,
} from "./pairing";
import { R_W0, R_W1, R_W2, R_W3 } from "./constants";

// --- status codes (mirrored by src/verifier/wasm.ts) -------------------------
export const STATUS_OK: i32 = 0;
export const STATUS_FORMAT: i32 = 1; // a coordinate is not canonical (≥ p)
export const STATUS_POINT: i32 = 2; // not on the curve, not in the subgroup, or infinity
export const STATUS_PUBLIC_INPUT: i32 = 3; // a public input is ≥ r
export const STATUS_REJECTED: i32 = 4; // well-formed, pairing equation false
export const STATUS_KEY_GAMMA_EQ_DELTA: i32 = 5; // verification key with γ = δ
export const STATUS_NO_KEY: i32 = 6;

// --- wire layouts --------------------------------------------------------------
/** Proof: A (G1) ‖ B (G2, EIP-197 order) ‖ C (G1): 256 bytes, the compact form. */
export const PROOF_A: usize = 0;
export const PROOF_B: usize = G1_BYTES;
export const PROOF_C: usize = G1_BYTES + G2_BYTES;
export const PROOF_BYTES: usize = 2 * G1_BYTES + G2_BYTES;
/** Public input / scalar: 32 bytes big-endian. */
export const SCALAR_BYTES: usize = FP_BYTES;
/** Verification key: α (G1) ‖ β ‖ γ ‖ δ (G2) ‖ IC₀..ICₙ (G1). */
export const VK_ALPHA: usize = 0;
export const VK_BETA: usize = G1_BYTES;
export const VK_GAMMA: usize = G1_BYTES + G2_BYTES;
export const VK_DELTA: usize = G1_BYTES + 2 * G2_BYTES;
export const VK_IC: usize = G1_BYTES + 3 * G2_BYTES;

// --- key state -----------------------------------------------------------------
/** Multiples 1..15 of each ICⱼ, affine (4-bit windows). */
const IC_TABLE_ENTRIES: usize = 15;
const IC_TABLE_SIZE: usize = IC_TABLE_ENTRIES * G1_AFFINE_SIZE;

let keyLoaded = false;
let nPublic: i32 = 0;
const KEY_ALPHA: usize = memory.data(72, 4);
const KEY_E_AB: usize = memory.data(432, 4);
const KEY_LINES_BETA: usize = memory.data(<i32>FIXED_LINES_SIZE, 4);
const KEY_LINES_GAMMA: usize = memory.data(<i32>FIXED_LINES_SIZE, 4);
const KEY_LINES_DELTA: usize = memory.data(<i32>FIXED_LINES_SIZE, 4);
/** (n+1) tables of IC_TABLE_SIZE bytes, and one "is infinity" byte per ICⱼ. */
let keyIcTables: usize = 0;
let keyIcInfinity: usize = 0;

export function publicInputCount(): i32 {
  return nPublic;
}

// --- scratch pool ----------------------------------------------------------------
// Grow-only scratch for per-call buffers whose size depends on the input
// (batches, multi-pairings). The stub runtime never frees, so the pool is
// reallocated only when a call needs more than any call before it.
let poolBase: usize = 0;
let poolSize: usize = 0;
export function scratch(size: usize): usize {
  if (size > poolSize) {
    const grown = max(size, poolSize * 2);
    poolBase = heap.alloc(grown);
    poolSize = grown;
  }
  return poolBase;
}

// --- helpers ---------------------------------------------------------------------

const T_G1: usize = memory.data(72, 4);
const T_G2: usize = memory.data(144, 4);
const J0: usize = memory.data(108, 4);
const J1: usize = memory.data(108, 4);

/** 0 when every coordinate of the encoded G1/G2 point is canonical. */
function allCanonical(src: usize, bytes: usize): bool {
  for (let off: usize = 0; off < bytes; off += FP_BYTES) {
    if (!fpFromBytes(T_G1, src + off)) return false;
  }
  return true;
}

function g1Status(out: usize, src: usize): i32 {
  const s = g1FromBytes(out, src);
  if (s == DECODE_OK) return STATUS_OK;
  return s == DECODE_NONCANONICAL ? STATUS_FORMAT : STATUS_POINT;
}
function g2Status(out: usize, src: usize): i32 {
  const s = g2FromBytes(out, src);
  if (s == DECODE_OK) return STATUS_OK;
  return s == DECODE_NONCANONICAL ? STATUS_FORMAT : STATUS_POINT;
}

/** True when the 32-byte big-endian scalar is < r. */
export function scalarIsCanonical(src: usize): bool {
  readWordsBE(src);
  return wordsLessThan(R_W0, R_W1, R_W2, R_W3);
}

// @ts-ignore: decorator
@inline function icTable(j: i32): usize {
  return keyIcTables + <usize>j * IC_TABLE_SIZE;
}
// @ts-ignore: decorator
@inline function icEntry(j: i32, d: u32): usize {
  return icTable(j) + <usize>(d - 1) * G1_AFFINE_SIZE; // d·ICⱼ, 1 ≤ d ≤ 15
}

/** Fills the multiples 1..15 of an affine point into table (affine, one shared inversion). */
function buildTable(table: usize, p: usize): void {
  const jac = scratch(IC_TABLE_ENTRIES * G1_JACOBIAN_SIZE);
  g1JacobianFromAffine(jac, p);
  for (let d: usize = 1; d < IC_TABLE_ENTRIES; d++) {
    g1AddMixed(jac + d * G1_JACOBIAN_SIZE, jac + (d - 1) * G1_JACOBIAN_SIZE, p);
  }
  // Multiples of a point of prime order r > 15 are never infinity.
  // (Key load only: one inversion per entry is affordable.)
  for (let d: usize = 0; d < IC_TABLE_ENTRIES; d++) g1ToAffine(table + d * G1_AFFINE_SIZE, jac + d * G1_JACOBIAN_SIZE);
}

/** Nibble w (0 = least significant) of a 32-byte big-endian scalar. */
// @ts-ignore: decorator
@inline function nibble(s: usize, w: i32): u32 {
  const b = load<u8>(s + 31 - <usize>(w >> 1)) as u32;
  return (w & 1) ? b >> 4 : b & 15;
}

// Fixed-base tables (keys with few public inputs): for each ICⱼ and each
// byte position k of the scalar, the affine multiples d·2^{8k}·ICⱼ for
// d = 1..255, so Σ sⱼ·ICⱼ costs one mixed addition per non-zero scalar byte
// and no doublings (Brickell–Gordon–McCurley–Wilson 1992, fixed-base
// windowing). 587 520 bytes per point, so only up to FIXED_BASE_MAX_POINTS.
const FB_WINDOWS: usize = 32;
const FB_ENTRIES: usize = 255;
const FB_TABLE_SIZE: usize = FB_WINDOWS * FB_ENTRIES * G1_AFFINE_SIZE;
const FIXED_BASE_MAX_POINTS: i32 = 16;
let keyFixedBase = false;
let keyFbTables: usize = 0;

// @ts-ignore: decorator
@inline function fbEntry(j: i32, k: usize, d: u32): usize {
  return keyFbTables + <usize>j * FB_TABLE_SIZE + (k * FB_ENTRIES + <usize>(d - 1)) * G1_AFFINE_SIZE;
}

const FB_BASE: usize = memory.data(72, 4);

/** Fills the fixed-base table of the affine point p (one shared inversion per window). */
function buildFixedBase(table: usize, p: usize): void {
  const n = FB_ENTRIES + 1; // d = 1..255, and 256 (the next window's base)
  const jac = scratch(n * G1_JACOBIAN_SIZE + 2 * n * FP_SIZE);
  const zs = jac + n * G1_JACOBIAN_SIZE;
  const zScratch = zs + n * FP_SIZE;
  memory.copy(FB_BASE, p, G1_AFFINE_SIZE);
  for (let k: usize = 0; k < FB_WINDOWS; k++) {
    g1JacobianFromAffine(jac, FB_BASE);
    for (let d: usize = 1; d < n; d++) g1AddMixed(jac + d * G1_JACOBIAN_SIZE, jac + (d - 1) * G1_JACOBIAN_SIZE, FB_BASE);
    for (let d: usize = 0; d < n; d++) memory.copy(zs + d * FP_SIZE, jac + d * G1_JACOBIAN_SIZE + G1_Z, FP_SIZE);
    batchInvert(zs, FP_SIZE, <i32>n, zScratch);
    for (let d: usize = 0; d < n; d++) {
      const dst = d < FB_ENTRIES ? table + (k * FB_ENTRIES + d) * G1_AFFINE_SIZE : FB_BASE;
      jacobianToAffineWithInv(dst, jac + d * G1_JACOBIAN_SIZE, zs + d * FP_SIZE);
    }
  }
}

const ZI2: usize = memory.data(36, 4);
/** (X/Z², Y/Z³) given 1/Z. */
function jacobianToAffineWithInv(out: usize, p: usize, zInv: usize): void {
  fpSqr(ZI2, zInv);
  fpMul(out + G1_X, p + G1_X, ZI2);
  fpMul(ZI2, ZI2, zInv);
  fpMul(out + G1_Y, p + G1_Y, ZI2);
}

/**
 * out = Σ_{j=first..n} sⱼ·ICⱼ (Jacobian); scalars at scalars + (j − first)·32.
 * Fixed-base tables when the key has them, else 4-bit Straus over the
 * per-key multiples 1..15.
 */
function icMsm(out: usize, scalars: usize, first: i32): void {
  g1JacobianSetInfinity(out);
  if (keyFixedBase) {
    for (let j = first; j <= nPublic; j++) {
      if (load<u8>(keyIcInfinity + <usize>j)) continue;
      const s = scalars + <usize>(j - first) * SCALAR_BYTES;
      for (let k: usize = 0; k < FB_WINDOWS; k++) {
        const d = load<u8>(s + 31 - k) as u32;
        if (d) g1AddMixed(out, out, fbEntry(j, k, d));
      }
    }
    return;
  }
  for (let w = 63; w >= 0; w--) {
    if (!g1JacobianIsInfinity(out)) {
      g1Double(out, out);
      g1Double(out, out);
      g1Double(out, out);
      g1Double(out, out);
    }
    for (let j = first; j <= nPublic; j++) {
      if (load<u8>(keyIcInfinity + <usize>j)) continue;
      const d = nibble(scalars + <usize>(j - first) * SCALAR_BYTES, w);
      if (d) g1AddMixed(out, out, icEntry(j, d));
    }
  }
}

// --- key loading ------------------------------------------------------------------

const PAIRS: usize = memory.data(8 * 136, 4); // pair table for the key computation and single verification
const PREP0: usize = memory.data(72, 4);
const PREP1: usize = memory.data(72, 4);
const PREP2: usize = memory.data(72, 4);
const INV3: usize = memory.data(3 * 36, 4);
const INV_SCRATCH: usize = memory.data(3 * 36, 4);
const F: usize = memory.data(432, 4);
const GT: usize = memory.data(432, 4);
const B_LINES: usize = memory.data(<i32>LINES_SIZE, 4);
const BETA: usize = memory.data(144, 4);
const GAMMA: usize = memory.data(144, 4);
const DELTA: usize = memory.data(144, 4);

function setPair(table: usize, k: i32, lines: usize, prepared: usize): void {
  store<u32>(table + <usize>k * PAIR_SIZE + PAIR_LINES, lines as u32);
  store<u32>(table + <usize>k * PAIR_SIZE + PAIR_P, prepared as u32);
}

/**
 * Loads a verification key for n public inputs from src (VK_* layout).
 * Rejects non-canonical coordinates, points off the curve or outside the
 * subgroups, α/β/γ/δ at infinity, and γ = δ (with γ = δ the terms for vk_x
 * and C merge and a proof can be forged for any public input).
 * ICⱼ may be infinity (an all-zero encoding).
 */
export function loadKey(src: usize, n: i32): i32 {
  keyLoaded = false;
  if (n < 0) return STATUS_FORMAT;
  let s = g1Status(KEY_ALPHA, src + VK_ALPHA);
  if (s != STATUS_OK) return s;
  s = g2Status(BETA, src + VK_BETA);
  if (s != STATUS_OK) return s;
  s = g2Status(GAMMA, src + VK_GAMMA);
  if (s != STATUS_OK) return s;
  s = g2Status(DELTA, src + VK_DELTA);
  if (s != STATUS_OK) return s;
  if (fp2Eq(GAMMA + G2_X, DELTA + G2_X) && fp2Eq(GAMMA + G2_Y, DELTA + G2_Y)) return STATUS_KEY_GAMMA_EQ_DELTA;

  const count = <usize>(n + 1);
  keyIcTables = heap.alloc(count * IC_TABLE_SIZE);
  keyIcInfinity = heap.alloc(count);
  keyFixedBase = n + 1 <= FIXED_BASE_MAX_POINTS;
  if (keyFixedBase) keyFbTables = heap.alloc(count * FB_TABLE_SIZE);
  for (let j: usize = 0; j < count; j++) {
    const enc = src + VK_IC + j * G1_BYTES;
    const d = g1FromBytes(T_G1, enc);
    if (d == DECODE_NONCANONICAL) return STATUS_FORMAT;
    if (d == DECODE_OK) {
      store<u8>(keyIcInfinity + j, 0);
      buildTable(keyIcTables + j * IC_TABLE_SIZE, T_G1);
      if (keyFixedBase) buildFixedBase(keyFbTables + j * FB_TABLE_SIZE, T_G1);
    } else if (fpIsZero(T_G1 + G1_X) && fpIsZero(T_G1 + G1_Y)) {
      store<u8>(keyIcInfinity + j, 1);
    } else return STATUS_POINT;
  }
  nPublic = n;

  prepareFixedLines(KEY_LINES_BETA, BETA);
  prepareFixedLines(KEY_LINES_GAMMA, GAMMA);
  prepareFixedLines(KEY_LINES_DELTA, DELTA);

  // e(α, β) through the same Miller loop as verification.
  memory.copy(INV3, KEY_ALPHA + G1_Y, FP_SIZE);
  batchInvert(INV3, FP_SIZE, 1, INV_SCRATCH);
  prepareG1Affine(PREP0, KEY_ALPHA, INV3);
  setPair(PAIRS, 0, KEY_LINES_BETA, PREP0);
  millerLoop(F, PAIRS, 0, 1);
  finalExponentiation(KEY_E_AB, F);
  keyLoaded = true;
  return STATUS_OK;
}

// --- single verification ----------------------------------------------------------

const A_PT: usize = memory.data(72, 4);
const B_PT: usize = memory.data(144, 4);
const C_PT: usize = memory.data(72, 4);
const VKX: usize = memory.data(108, 4);

/** Validates and decodes a 256-byte proof into A_PT-style buffers. */
function decodeProof(src: usize, a: usize, b: usize, c: usize): i32 {
  // Canonical encodings first, so a malformed number is reported as such
  // even when another coordinate would also fail the curve checks.
  if (!allCanonical(src, PROOF_BYTES)) return STATUS_FORMAT;
  let s = g1Status(a, src + PROOF_A);
  if (s != STATUS_OK) return s;
  s = g1Status(c, src + PROOF_C);
  if (s != STATUS_OK) return s;
  return g2Status(b, src + PROOF_B);
}

/**
 * Verifies one proof: src holds the proof (PROOF_BYTES) followed by
 * nPublic 32-byte big-endian public inputs.
 */
export function verifyProof(src: usize): i32 {
  if (!keyLoaded) return STATUS_NO_KEY;
  const inputs = src + PROOF_BYTES;
  if (!allCanonical(src, PROOF_BYTES)) return STATUS_FORMAT;
  for (let j = 0; j < nPublic; j++) {
    if (!scalarIsCanonical(inputs + <usize>j * SCALAR_BYTES)) return STATUS_PUBLIC_INPUT;
  }
  const s = decodeProof(src, A_PT, B_PT, C_PT);
  if (s != STATUS_OK) return s;

  // vk_x = IC₀ + Σ sⱼ·ICⱼ
  icMsm(VKX, inputs, 1);
  if (!load<u8>(keyIcInfinity)) g1AddMixed(VKX, VKX, icEntry(0, 1));
  const vkxInfinity = g1JacobianIsInfinity(VKX);

  // One inversion for the three y's (P̃ = (x/y, 1/y) form).
  memory.copy(INV3, A_PT + G1_Y, FP_SIZE);
  memory.copy(INV3 + FP_SIZE, C_PT + G1_Y, FP_SIZE);
  memory.copy(INV3 + 2 * FP_SIZE, VKX + G1_Y, FP_SIZE);
  batchInvert(INV3, FP_SIZE, vkxInfinity ? 2 : 3, INV_SCRATCH);
  prepareG1Affine(PREP0, A_PT, INV3);
  prepareG1Affine(PREP1, C_PT, INV3 + FP_SIZE);
  prepareNeg(PREP1, PREP1); // −C
  if (!vkxInfinity) {
    prepareG1Jacobian(PREP2, VKX, INV3 + 2 * FP_SIZE);
    prepareNeg(PREP2, PREP2); // −vk_x
  }

  prepareLines(B_LINES, B_PT);
  setPair(PAIRS, 0, B_LINES, PREP0);
  setPair(PAIRS, 1, KEY_LINES_DELTA, PREP1);
  if (!vkxInfinity) setPair(PAIRS, 2, KEY_LINES_GAMMA, PREP2);
  millerLoop(F, PAIRS, 1, vkxInfinity ? 1 : 2);
  finalExponentiation(GT, F);
  return fp12Eq(GT, KEY_E_AB) ? STATUS_OK : STATUS_REJECTED;
}

// --- batch verification -------------------------------------------------------------

/** Decoded proof cache entry. */
const CACHE_A: usize = 0;
const CACHE_B: usize = G1_AFFINE_SIZE;
const CACHE_C: usize = G1_AFFINE_SIZE + G2_AFFINE_SIZE;
const CACHE_ENTRY: usize = 2 * G1_AFFINE_SIZE + G2_AFFINE_SIZE;
export const MAX_BATCH: i32 = 128;
const BATCH_CACHE: usize = heap.alloc(<usize>MAX_BATCH * CACHE_ENTRY);

/**
 * Decodes and validates count proofs (PROOF_BYTES each, from src) into the
 * batch cache and writes one i32 status per proof to statusOut.
 */
export function batchPrepare(src: usize, count: i32, statusOut: usize): i32 {
  if (!keyLoaded) return STATUS_NO_KEY;
  if (count < 0 || count > MAX_BATCH) return STATUS_FORMAT;
  let valid = 0;
  for (let i = 0; i < count; i++) {
    const e = BATCH_CACHE + <usize>i * CACHE_ENTRY;
    const s = decodeProof(src + <usize>i * PROOF_BYTES, e + CACHE_A, e + CACHE_B, e + CACHE_C);
    store<i32>(statusOut + <usize>i * 4, s);
    if (s == STATUS_OK) valid++;
  }
  return valid;
}

/**
 * Checks the randomised batch equation over k cached proofs. src holds: k
 * u32 cache indices, then k 32-byte ρᵢ (< 2¹²⁸, non-zero), then nPublic + 1
 * combined scalars cⱼ = Σ ρᵢ·sᵢⱼ mod r (c₀ = Σ ρᵢ). Returns STATUS_OK when the
 * equation holds, STATUS_REJECTED otherwise.
 */
export function batchCheck(src: usize, k: i32): i32 {
  if (!keyLoaded) return STATUS_NO_KEY;
  if (k <= 0 || k > MAX_BATCH) return STATUS_FORMAT;
  const indices = src;
  const rhos = src + <usize>k * 4;
  const combined = rhos + <usize>k * SCALAR_BYTES;
  for (let j = 0; j <= nPublic; j++) {
    if (!scalarIsCanonical(combined + <usize>j * SCALAR_BYTES)) return STATUS_PUBLIC_INPUT;
  }
  for (let i = 0; i < k; i++) {
    const idx = load<u32>(indices + <usize>i * 4);
    if (idx >= <u32>MAX_BATCH) return STATUS_FORMAT;
  }
  // Layout of this call's scratch.
  const nG1 = <usize>k + 3; // ρᵢAᵢ, then C', vk_x', α'
  const jac = scratch(nG1 * G1_JACOBIAN_SIZE + nG1 * FP_SIZE * 2 + nG1 * PREP_SIZE + <usize>k * LINES_SIZE + (nG1) * PAIR_SIZE + <usize>k * G1_AFFINE_SIZE);
  const invs = jac + nG1 * G1_JACOBIAN_SIZE;
  const invScratch = invs + nG1 * FP_SIZE;
  const prep = invScratch + nG1 * FP_SIZE;
  const lines = prep + nG1 * PREP_SIZE;
  const pairs = lines + <usize>k * LINES_SIZE;
  const cPoints = pairs + nG1 * PAIR_SIZE;
  const jC = jac + <usize>k * G1_JACOBIAN_SIZE;
  const jVkx = jC + G1_JACOBIAN_SIZE;
  const jAlpha = jVkx + G1_JACOBIAN_SIZE;

  for (let i = 0; i < k; i++) {
    const e = BATCH_CACHE + <usize>(load<u32>(indices + <usize>i * 4)) * CACHE_ENTRY;
    const rho = rhos + <usize>i * SCALAR_BYTES;
    g1MsmBinary(jac + <usize>i * G1_JACOBIAN_SIZE, e + CACHE_A, 0, rho, 1, 128); // ρᵢAᵢ
    memory.copy(cPoints + <usize>i * G1_AFFINE_SIZE, e + CACHE_C, G1_AFFINE_SIZE);
  }
  g1MsmBinary(jC, cPoints, G1_AFFINE_SIZE, rhos, k, 128); // Σ ρᵢCᵢ
  icMsm(jVkx, combined, 0); // Σ cⱼ·ICⱼ, c₀ = Σρᵢ
  g1MsmBinary(jAlpha, KEY_ALPHA, 0, combined, 1, 256); // (Σρᵢ)·α

  // Gather non-infinity points, invert their Y together.
  let m = 0;
  for (let i: usize = 0; i < nG1; i++) {
    const p = jac + i * G1_JACOBIAN_SIZE;
    if (g1JacobianIsInfinity(p)) continue;
    memory.copy(invs + <usize>m * FP_SIZE, p + G1_Y, FP_SIZE);
    m++;
  }
  batchInvert(invs, FP_SIZE, m, invScratch);
  let nVar = 0;
  let nFixed = 0;
  let q = 0;
  const varPairs = pairs;
  for (let i: usize = 0; i < nG1; i++) {
    const p = jac + i * G1_JACOBIAN_SIZE;
    if (g1JacobianIsInfinity(p)) continue;
    const pr = prep + i * PREP_SIZE;
    prepareG1Jacobian(pr, p, invs + <usize>q * FP_SIZE);
    q++;
    if (i < <usize>k) {
      const e = BATCH_CACHE + <usize>(load<u32>(indices + i * 4)) * CACHE_ENTRY;
      const l = lines + <usize>nVar * LINES_SIZE;
      prepareLines(l, e + CACHE_B);
      setPair(varPairs, nVar, l, pr);
      nVar++;
    }
  }
  // Fixed pairs follow the variable ones in the table.
  const fixedPairs = varPairs;
  const fixedStart = nVar;
  if (!g1JacobianIsInfinity(jC)) {
    const pr = prep + <usize>k * PREP_SIZE;
    prepareNeg(pr, pr);
    setPair(fixedPairs, fixedStart + nFixed++, KEY_LINES_DELTA, pr);
  }
  if (!g1JacobianIsInfinity(jVkx)) {
    const pr = prep + <usize>(k + 1) * PREP_SIZE;
    prepareNeg(pr, pr);
    setPair(fixedPairs, fixedStart + nFixed++, KEY_LINES_GAMMA, pr);
  }
  if (!g1JacobianIsInfinity(jAlpha)) {
    const pr = prep + <usize>(k + 2) * PREP_SIZE;
    prepareNeg(pr, pr);
    setPair(fixedPairs, fixedStart + nFixed++, KEY_LINES_BETA, pr);
  }
  millerLoop(F, pairs, nVar, nFixed);
  finalExponentiation(GT, F);
  return fp12IsOne(GT) ? STATUS_OK : STATUS_REJECTED;
}

/**
 * Re-runs one stage of the last verifyProof call (for cost breakdowns in
 * bench/verifier.ts): 0 decode + validate proof, 1 vk_x MSM, 2 lines of B,
 * 3 Miller loop, 4 G2 subgroup check of B, 5 G1 y inversions.
 */
export function benchStage(src: usize, stage: i32): void {
  if (stage == 0) decodeProof(src, A_PT, B_PT, C_PT);
  else if (stage == 1) icMsm(VKX, src + PROOF_BYTES, 1);
  else if (stage == 2) prepareLines(B_LINES, B_PT);
  else if (stage == 3) millerLoop(F, PAIRS, 1, 2);
  else if (stage == 4) g2IsInSubgroup(B_PT);
  else batchInvert(INV3, FP_SIZE, 3, INV_SCRATCH);
}
