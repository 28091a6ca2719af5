// zkagent's Groth16 PROVER over BN254, AssemblyScript → build/prover.wasm
// (entry prover-index.ts; the test build prover-testing.ts adds the stages
// one by one): a second module beside the verifier (assembly/index.ts), which
// keeps only its own exports. It proves with a snarkjs zkey (read once, kept here across
// proofs) and a witness computed by the circuit's own circom witness
// calculator on the JavaScript side (src/prover/).
//
// ============================== the computation ==================================
//
// For the witness w (w₀ = 1, then the nPublic public signals, then the rest),
// as snarkjs groth16_prove.js computes it, so that the same zkey works:
//
//   A_T[c] = Σ coef·w_s over the zkey's coefficients with m = 0 (section 4),
//   B_T[c] likewise with m = 1, C_T[c] = A_T[c]·B_T[c]   (c < n = domainSize)
//   for X in A, B, C:  X ← NTT( g^i · INTT(X_T)[i] ),  g = w[log n + 1], the
//                      2n-th root: X's evaluations on the odd coset g·⟨ω⟩
//   h_i = A[i]·B[i] − C[i]                            (scalars of the H points)
//
//   πA  = α₁ + Σ w_i·A_i + r·δ₁
//   πB  = β₂ + Σ w_i·B2_i + s·δ₂          (and B₁ = β₁ + Σ w_i·B1_i + s·δ₁ in G1)
//   πC  = Σ_{i > nPublic} w_i·C_i + Σ h_i·H_i + s·πA + r·B₁ − r·s·δ₁
//
// with r, s uniformly random (from the caller's CSPRNG, fresh per proof).
// The fixed terms ride along in the MSMs as extra bases (α₁ and δ₁ with
// scalars 1 and r in A's, β₁ and δ₁ with 1 and s in B1's, β₂ and δ₂ in B2's,
// δ₁ with −r·s in C's): a base costs W table additions there, against ≈ 250
// doublings and additions for a separate scalar multiplication. Only s·πA +
// r·B₁ (bases known only at the end) take one shared double-and-add chain.
// Before returning, the proof is checked with the verifier's own code
// (groth16.ts) against the key's α, β, γ, δ, IC: a witness that does not
// satisfy the circuit, or a zkey that does not match it, yields
// PROVER_SELF_CHECK instead of a proof that would not verify.
//
// ================================ the ABI =========================================
//
// JavaScript writes into the I/O buffer (`io(size)`) and calls, in order:
//   setup(nVars, nPublic, domainLog, nCoef)
//   loadPoints()      io: α₁ β₁ β₂ γ₂ δ₁ δ₂ as the zkey stores them (section 2)
//   loadIc()          io: IC₀..IC_nPublic (section 3)
//   loadCoefs()       io: the coefficient records (section 4 after its count)
//   loadBases(set, count, window)  io: one point section (SET_A … SET_H)
// then per proof:
//   prove()           io: witness ‖ r ‖ s ‖ (−r·s mod r) in, proof ‖ public inputs out
// Byte forms: zkey points are little-endian 32-byte coordinates in
// Montgomery form (x·2^256 mod p), G2 as x.c0 ‖ x.c1 ‖ y.c0 ‖ y.c1, the point
// at infinity all zero; witness and blinding scalars are 32-byte
// little-endian integers < r. The proof comes out in the verifier's wire form
// (layout.ts: A ‖ B ‖ C, big-endian, G2 imaginary part first), followed by
// the nPublic public inputs, 32 bytes big-endian each.

import { FP_SIZE, fpMul, fpIsZero } from "./fp";
import { G1_AFFINE_SIZE, G1_JACOBIAN_SIZE, g1IsOnCurve, g1ToBytes } from "./g1";
import { G2_AFFINE_SIZE, G2_JACOBIAN_SIZE, g2IsOnCurve, g2ToBytes } from "./g2";
import { FR_SIZE, frMul, frSub, frAdd, leIsCanonical, limbsFromWords, frFromLE, frToLE } from "./fr";
import { nttSetDomain, ntt, intt, cosetShift } from "./ntt";
import { Bases, basesBuild, msm, msmSmall, jAdd, jToAffine, SCALAR_SIZE } from "./msm";
import {
  P_W0, P_W1, P_W2, P_W3, ZKEY_FP_TO_MONT, ZKEY_COEF_TO_MONT, FR_ROOTS, FR_TWO_ADICITY, FR_ONE,
} from "./constants";
import { loadKey, verifyProof } from "./groth16";
import { STATUS_OK, PROOF_A, PROOF_B, PROOF_C, PROOF_BYTES, VK_ALPHA, VK_BETA, VK_GAMMA, VK_DELTA, VK_IC, G1_BYTES, SCALAR_BYTES } from "./layout";

// --- status codes (twin: src/prover/wasm.ts ProverStatus) ------------------------------
export const PROVER_OK: i32 = 0;
/** sizes or indices out of range, or calls out of order */
export const PROVER_FORMAT: i32 = 1;
/** a zkey coordinate ≥ p, a point off its curve, or a base of small order */
export const PROVER_POINT: i32 = 2;
/** a coefficient record with a bad matrix, row or signal index, or a value ≥ r */
export const PROVER_COEF: i32 = 3;
/** a witness element ≥ r, or w₀ ≠ 1 */
export const PROVER_WITNESS: i32 = 4;
/** the key's α, β, γ, δ or IC rejected by the verifier's key checks (subgroup, γ = δ) */
export const PROVER_KEY: i32 = 5;
/** a proof point came out at infinity (probability ≈ 2^−254 for a valid key) */
export const PROVER_DEGENERATE: i32 = 6;
/** the proof does not verify: the witness does not satisfy this key's circuit */
export const PROVER_SELF_CHECK: i32 = 7;

/** The zkey's point sections (5..9), in order. */
export const SET_A: i32 = 0;
export const SET_B1: i32 = 1;
export const SET_B2: i32 = 2;
export const SET_C: i32 = 3;
export const SET_H: i32 = 4;
const SETS: i32 = 5;

/** zkey byte sizes: a coordinate, a G1 and a G2 point, a coefficient record. */
const ZKEY_FQ_BYTES: usize = 32;
const ZKEY_G1_BYTES: usize = 2 * ZKEY_FQ_BYTES;
const ZKEY_G2_BYTES: usize = 4 * ZKEY_FQ_BYTES;
const COEF_RECORD_BYTES: usize = 12 + 32;
const REC_MATRIX: usize = 0;
const REC_ROW: usize = 4;
const REC_SIGNAL: usize = 8;
const REC_VALUE: usize = 12;
/** Header points (section 2) in the order snarkjs writes them. */
const HDR_ALPHA1: usize = 0;
const HDR_BETA1: usize = HDR_ALPHA1 + ZKEY_G1_BYTES;
const HDR_BETA2: usize = HDR_BETA1 + ZKEY_G1_BYTES;
const HDR_GAMMA2: usize = HDR_BETA2 + ZKEY_G2_BYTES;
const HDR_DELTA1: usize = HDR_GAMMA2 + ZKEY_G2_BYTES;
const HDR_DELTA2: usize = HDR_DELTA1 + ZKEY_G1_BYTES;
export const HEADER_POINTS_BYTES: usize = HDR_DELTA2 + ZKEY_G2_BYTES;
/** Coefficients as kept here: matrix, row, signal (u32 each), value (Fr, Montgomery). */
const COEF_MATRIX: usize = 0;
const COEF_ROW: usize = 4;
const COEF_SIGNAL: usize = 8;
const COEF_VALUE: usize = 12;
const COEF_SIZE: usize = COEF_VALUE + FR_SIZE;
/** prove()'s input after the witness: r, s, −r·s (little-endian scalars). */
const BLIND_BYTES: usize = 3 * SCALAR_SIZE;
/** Scalars after the witness in the witness buffer: r, s, −r·s (copied from the input), then 1. */
const EXTRA_R: i32 = 0;
const EXTRA_S: i32 = 1;
const EXTRA_NEG_RS: i32 = 2;
const EXTRA_ONE: i32 = 3;
const EXTRA_SCALARS: i32 = 4;
/** Extra bases a set carries at most (the fixed terms above). */
const EXTRA_BASES: i32 = 2;

// --- I/O buffer ---------------------------------------------------------------------

let ioBase: usize = 0;
let ioSize: usize = 0;

/** Returns the I/O buffer, grown to at least size bytes (its address may change). */
export function io(size: u32): usize {
  if (<usize>size > ioSize) {
    const grown = max(<usize>size, ioSize * 2);
    ioBase = heap.alloc(grown);
    ioSize = grown;
  }
  return ioBase;
}

// --- key state ------------------------------------------------------------------------

let nVars: i32 = 0;
let nPublic: i32 = 0;
let domainLog: i32 = 0;
let domainSize: usize = 0;
let nCoef: i32 = 0;
let coefs: usize = 0;
let stage: i32 = 0; // bit i set: load step i done
const STAGE_SETUP: i32 = 1;
const STAGE_POINTS: i32 = 2;
const STAGE_IC: i32 = 4;
const STAGE_COEFS: i32 = 8;
const STAGE_BASES: i32 = 16; // << set

const ALPHA1: usize = memory.data(<i32>G1_AFFINE_SIZE, 4);
const BETA1: usize = memory.data(<i32>G1_AFFINE_SIZE, 4);
const DELTA1: usize = memory.data(<i32>G1_AFFINE_SIZE, 4);
const BETA2: usize = memory.data(<i32>G2_AFFINE_SIZE, 4);
const GAMMA2: usize = memory.data(<i32>G2_AFFINE_SIZE, 4);
const DELTA2: usize = memory.data(<i32>G2_AFFINE_SIZE, 4);

const bases = new StaticArray<Bases>(SETS);
for (let i = 0; i < SETS; i++) bases[i] = new Bases();

// Per-proof buffers, sized at setup.
let witness: usize = 0; // nVars scalars (little-endian words), then the EXTRA_* scalars
let witnessMont: usize = 0; // nVars Fr (Montgomery)
let polyA: usize = 0;
let polyB: usize = 0;
let polyC: usize = 0;
let hScalars: usize = 0; // domainSize scalars
const RESULTS: usize = memory.data(<i32>(4 * G1_JACOBIAN_SIZE + G2_JACOBIAN_SIZE), 4);
// @ts-ignore: decorator
@inline function result(set: i32): usize {
  // A, B1, C, H in G1; B2 after them
  if (set == SET_B2) return RESULTS + 4 * G1_JACOBIAN_SIZE;
  const slot = set == SET_A ? 0 : set == SET_B1 ? 1 : set == SET_C ? 2 : 3;
  return RESULTS + <usize>slot * G1_JACOBIAN_SIZE;
}

/** Declares the key's sizes; every later call checks against them. */
export function setup(vars: i32, pub: i32, log: i32, coefCount: i32): i32 {
  stage = 0;
  // w₀ = 1 and the public signals come first; log + 1 ≤ s for the coset root.
  if (vars < 1 || pub < 0 || pub >= vars || log < 0 || log + 1 > FR_TWO_ADICITY || coefCount < 0) return PROVER_FORMAT;
  nVars = vars;
  nPublic = pub;
  domainLog = log;
  domainSize = (<usize>1) << <usize>log;
  nCoef = coefCount;
  witness = heap.alloc(<usize>(vars + EXTRA_SCALARS) * SCALAR_SIZE);
  witnessMont = heap.alloc(<usize>vars * FR_SIZE);
  polyA = heap.alloc(domainSize * FR_SIZE);
  polyB = heap.alloc(domainSize * FR_SIZE);
  polyC = heap.alloc(domainSize * FR_SIZE);
  hScalars = heap.alloc(domainSize * SCALAR_SIZE);
  coefs = heap.alloc(max<usize>(<usize>coefCount, 1) * COEF_SIZE);
  nttSetDomain(log);
  stage = STAGE_SETUP;
  return PROVER_OK;
}

// --- zkey decoding ------------------------------------------------------------------------

/** True when the 32-byte little-endian integer at src is < p. */
function fqIsCanonical(src: usize): bool {
  const w3 = load<u64>(src + 24), w2 = load<u64>(src + 16), w1 = load<u64>(src + 8), w0 = load<u64>(src);
  if (w3 != P_W3) return w3 < P_W3;
  if (w2 != P_W2) return w2 < P_W2;
  if (w1 != P_W1) return w1 < P_W1;
  return w0 < P_W0;
}

/** A zkey coordinate (x·2^256 mod p, little-endian) into this code's Montgomery form. */
function fqFromZkey(out: usize, src: usize): bool {
  if (!fqIsCanonical(src)) return false;
  limbsFromWords(out, src);
  fpMul(out, out, ZKEY_FP_TO_MONT);
  return true;
}

const DECODED: i32 = 0;
const DECODED_INFINITY: i32 = 1;
const DECODE_BAD: i32 = 2;

function g1FromZkey(out: usize, src: usize): i32 {
  if (!fqFromZkey(out, src) || !fqFromZkey(out + FP_SIZE, src + ZKEY_FQ_BYTES)) return DECODE_BAD;
  if (fpIsZero(out) && fpIsZero(out + FP_SIZE)) return DECODED_INFINITY;
  return g1IsOnCurve(out) ? DECODED : DECODE_BAD;
}

function g2FromZkey(out: usize, src: usize): i32 {
  for (let i: usize = 0; i < 4; i++) {
    if (!fqFromZkey(out + i * FP_SIZE, src + i * ZKEY_FQ_BYTES)) return DECODE_BAD;
  }
  let zero = true;
  for (let i: usize = 0; i < 4; i++) zero = zero && fpIsZero(out + i * FP_SIZE);
  if (zero) return DECODED_INFINITY;
  return g2IsOnCurve(out) ? DECODED : DECODE_BAD;
}

/** Section 2's six points; none may be infinity. */
export function loadPoints(): i32 {
  if (!(stage & STAGE_SETUP)) return PROVER_FORMAT;
  const src = ioBase;
  if (g1FromZkey(ALPHA1, src + HDR_ALPHA1) != DECODED) return PROVER_POINT;
  if (g1FromZkey(BETA1, src + HDR_BETA1) != DECODED) return PROVER_POINT;
  if (g2FromZkey(BETA2, src + HDR_BETA2) != DECODED) return PROVER_POINT;
  if (g2FromZkey(GAMMA2, src + HDR_GAMMA2) != DECODED) return PROVER_POINT;
  if (g1FromZkey(DELTA1, src + HDR_DELTA1) != DECODED) return PROVER_POINT;
  if (g2FromZkey(DELTA2, src + HDR_DELTA2) != DECODED) return PROVER_POINT;
  stage |= STAGE_POINTS;
  return PROVER_OK;
}

const IC_POINT: usize = memory.data(<i32>G1_AFFINE_SIZE, 4);

/** Section 3 (IC₀..IC_nPublic): with α, β, γ, δ, the verification key the self-check uses. */
export function loadIc(): i32 {
  if (!(stage & STAGE_POINTS)) return PROVER_FORMAT;
  const count = <usize>nPublic + 1;
  const vk = heap.alloc(VK_IC + count * G1_BYTES);
  g1ToBytes(vk + VK_ALPHA, ALPHA1);
  g2ToBytes(vk + VK_BETA, BETA2);
  g2ToBytes(vk + VK_GAMMA, GAMMA2);
  g2ToBytes(vk + VK_DELTA, DELTA2);
  for (let j: usize = 0; j < count; j++) {
    const d = g1FromZkey(IC_POINT, ioBase + j * ZKEY_G1_BYTES);
    if (d == DECODE_BAD) return PROVER_POINT;
    if (d == DECODED) g1ToBytes(vk + VK_IC + j * G1_BYTES, IC_POINT);
    else memory.fill(vk + VK_IC + j * G1_BYTES, 0, G1_BYTES); // (0, 0): infinity in the wire form
  }
  if (loadKey(vk, nPublic, false) != STATUS_OK) return PROVER_KEY; // no fixed-base tables: one verification per proof
  stage |= STAGE_IC;
  return PROVER_OK;
}

/** Section 4's records (after its count): matrix m ∈ {0, 1}, row c < n, signal s < nVars, value < r. */
export function loadCoefs(): i32 {
  if (!(stage & STAGE_SETUP)) return PROVER_FORMAT;
  for (let i: usize = 0; i < <usize>nCoef; i++) {
    const rec = ioBase + i * COEF_RECORD_BYTES;
    const m = load<u32>(rec + REC_MATRIX);
    const row = load<u32>(rec + REC_ROW);
    const signal = load<u32>(rec + REC_SIGNAL);
    if (m > 1 || <usize>row >= domainSize || signal >= <u32>nVars || !leIsCanonical(rec + REC_VALUE)) return PROVER_COEF;
    const dst = coefs + i * COEF_SIZE;
    store<u32>(dst + COEF_MATRIX, m);
    store<u32>(dst + COEF_ROW, row);
    store<u32>(dst + COEF_SIGNAL, signal);
    limbsFromWords(dst + COEF_VALUE, rec + REC_VALUE);
    frMul(dst + COEF_VALUE, dst + COEF_VALUE, ZKEY_COEF_TO_MONT); // c·2^512 → c·2^261
  }
  stage |= STAGE_COEFS;
  return PROVER_OK;
}

/**
 * One point section (5..9) of count points; window 0 picks the width. The
 * points at infinity are dropped (they contribute nothing), the rest are
 * checked on the curve and get their window tables (msm.ts).
 */
export function loadBases(set: i32, count: i32, window: i32): i32 {
  if (!(stage & STAGE_POINTS) || set < 0 || set >= SETS || window < 0 || window > 16) return PROVER_FORMAT;
  const expected = set == SET_C ? nVars - nPublic - 1 : set == SET_H ? <i32>domainSize : nVars;
  if (count != expected) return PROVER_FORMAT;
  const g2 = set == SET_B2;
  const zkeySize = g2 ? ZKEY_G2_BYTES : ZKEY_G1_BYTES;
  const affine = g2 ? G2_AFFINE_SIZE : G1_AFFINE_SIZE;
  const points = heap.alloc(<usize>(count + EXTRA_BASES) * affine);
  const index = heap.alloc(<usize>(count + EXTRA_BASES) * 4);
  const first = set == SET_C ? nPublic + 1 : 0; // C's scalars start after w₀ and the public signals
  let k: usize = 0;
  for (let i = 0; i < count; i++) {
    const src = ioBase + <usize>i * zkeySize;
    const dst = points + k * affine;
    const d = g2 ? g2FromZkey(dst, src) : g1FromZkey(dst, src);
    if (d == DECODE_BAD) return PROVER_POINT;
    if (d == DECODED_INFINITY) continue;
    store<u32>(index + k * 4, <u32>(first + i));
    k++;
  }
  // The fixed terms of the proof (see the file comment), as extra bases.
  if (set == SET_A) {
    k = addBase(points, index, k, affine, ALPHA1, EXTRA_ONE);
    k = addBase(points, index, k, affine, DELTA1, EXTRA_R);
  } else if (set == SET_B1) {
    k = addBase(points, index, k, affine, BETA1, EXTRA_ONE);
    k = addBase(points, index, k, affine, DELTA1, EXTRA_S);
  } else if (set == SET_B2) {
    k = addBase(points, index, k, affine, BETA2, EXTRA_ONE);
    k = addBase(points, index, k, affine, DELTA2, EXTRA_S);
  } else if (set == SET_C) {
    k = addBase(points, index, k, affine, DELTA1, EXTRA_NEG_RS);
  }
  if (!basesBuild(bases[set], g2, points, <i32>k, index, window)) return PROVER_POINT;
  stage |= STAGE_BASES << set;
  return PROVER_OK;
}

/** Appends the affine point p with scalar EXTRA_* index extra; returns the new count. */
function addBase(points: usize, index: usize, k: usize, affine: usize, p: usize, extra: i32): usize {
  memory.copy(points + k * affine, p, affine);
  store<u32>(index + k * 4, <u32>(nVars + extra));
  return k + 1;
}

const ALL_LOADED: i32 = STAGE_SETUP | STAGE_POINTS | STAGE_IC | STAGE_COEFS | (((1 << SETS) - 1) * STAGE_BASES);

// --- proving, stage by stage (prover-testing.ts exports the stages) ----------------------

/** Copies the witness and the blinding scalars out of the I/O buffer and checks them. */
export function stageWitness(): i32 {
  if (stage != ALL_LOADED) return PROVER_FORMAT;
  const n = <usize>nVars;
  memory.copy(witness, ioBase, n * SCALAR_SIZE + BLIND_BYTES); // witness ‖ r ‖ s ‖ −r·s
  const one = witness + (n + <usize>EXTRA_ONE) * SCALAR_SIZE;
  memory.fill(one, 0, SCALAR_SIZE);
  store<u8>(one, 1);
  for (let i: usize = 0; i < n; i++) {
    const w = witness + i * SCALAR_SIZE;
    if (!leIsCanonical(w)) return PROVER_WITNESS;
    frFromLE(witnessMont + i * FR_SIZE, w);
  }
  if (memory.compare(witnessMont, FR_ONE, FR_SIZE) != 0) return PROVER_WITNESS;
  for (let i: usize = 0; i < 3; i++) if (!leIsCanonical(witness + (n + i) * SCALAR_SIZE)) return PROVER_WITNESS;
  return PROVER_OK;
}

const PRODUCT: usize = memory.data(<i32>FR_SIZE, 4);

/** The scalars h_i of the H points, exactly as snarkjs computes them (see the file comment). */
export function stageQuotient(): void {
  const n = domainSize;
  memory.fill(polyA, 0, n * FR_SIZE);
  memory.fill(polyB, 0, n * FR_SIZE);
  for (let i: usize = 0; i < <usize>nCoef; i++) {
    const rec = coefs + i * COEF_SIZE;
    const target = (load<u32>(rec + COEF_MATRIX) == 0 ? polyA : polyB) + <usize>load<u32>(rec + COEF_ROW) * FR_SIZE;
    frMul(PRODUCT, rec + COEF_VALUE, witnessMont + <usize>load<u32>(rec + COEF_SIGNAL) * FR_SIZE);
    frAdd(target, target, PRODUCT);
  }
  for (let i: usize = 0; i < n; i++) frMul(polyC + i * FR_SIZE, polyA + i * FR_SIZE, polyB + i * FR_SIZE);
  const coset = FR_ROOTS + (<usize>domainLog + 1) * FR_SIZE;
  intt(polyA);
  cosetShift(polyA, coset);
  ntt(polyA);
  intt(polyB);
  cosetShift(polyB, coset);
  ntt(polyB);
  intt(polyC);
  cosetShift(polyC, coset);
  ntt(polyC);
  for (let i: usize = 0; i < n; i++) {
    const h = polyA + i * FR_SIZE;
    frMul(h, h, polyB + i * FR_SIZE);
    frSub(h, h, polyC + i * FR_SIZE);
    frToLE(hScalars + i * SCALAR_SIZE, h);
  }
}

/** One multi-scalar multiplication, into its result slot. */
export function stageMsm(set: i32): void {
  msm(result(set), bases[set], set == SET_H ? hScalars : witness);
}

const SMALL_POINTS: usize = memory.data(<i32>(2 * G1_AFFINE_SIZE), 4);
const SMALL_SCALARS: usize = memory.data(<i32>(2 * SCALAR_SIZE), 8);
const PI_C: usize = memory.data(<i32>G1_JACOBIAN_SIZE, 4);
const AFFINE_A: usize = memory.data(<i32>G1_AFFINE_SIZE, 4);
const AFFINE_B1: usize = memory.data(<i32>G1_AFFINE_SIZE, 4);
const AFFINE_B: usize = memory.data(<i32>G2_AFFINE_SIZE, 4);
const AFFINE_C: usize = memory.data(<i32>G1_AFFINE_SIZE, 4);

/** Completes πC, writes the proof and the public inputs into the I/O buffer, and verifies it. */
export function stageFinish(): i32 {
  const blind = witness + <usize>nVars * SCALAR_SIZE;
  // πA, B₁ and πB are complete (their fixed terms were extra bases of the MSMs).
  if (!jToAffine(false, AFFINE_A, result(SET_A)) || !jToAffine(false, AFFINE_B1, result(SET_B1)) || !jToAffine(true, AFFINE_B, result(SET_B2))) {
    return PROVER_DEGENERATE;
  }
  // πC = (Σ C − r·s·δ₁) + Σ H + s·πA + r·B₁, the last two by one shared chain
  memory.copy(SMALL_POINTS, AFFINE_A, G1_AFFINE_SIZE);
  memory.copy(SMALL_POINTS + G1_AFFINE_SIZE, AFFINE_B1, G1_AFFINE_SIZE);
  memory.copy(SMALL_SCALARS, blind + <usize>EXTRA_S * SCALAR_SIZE, SCALAR_SIZE);
  memory.copy(SMALL_SCALARS + SCALAR_SIZE, blind + <usize>EXTRA_R * SCALAR_SIZE, SCALAR_SIZE);
  msmSmall(PI_C, false, SMALL_POINTS, SMALL_SCALARS, 2);
  jAdd(false, PI_C, PI_C, result(SET_C));
  jAdd(false, PI_C, PI_C, result(SET_H));
  if (!jToAffine(false, AFFINE_C, PI_C)) return PROVER_DEGENERATE;

  // The wire form, then the public inputs w₁..w_nPublic big-endian.
  const out = io(<u32>(PROOF_BYTES + <usize>nPublic * SCALAR_BYTES));
  g1ToBytes(out + PROOF_A, AFFINE_A);
  g2ToBytes(out + PROOF_B, AFFINE_B);
  g1ToBytes(out + PROOF_C, AFFINE_C);
  for (let j: usize = 0; j < <usize>nPublic; j++) {
    const src = witness + (j + 1) * SCALAR_SIZE;
    const dst = out + PROOF_BYTES + j * SCALAR_BYTES;
    for (let b: usize = 0; b < SCALAR_BYTES; b++) store<u8>(dst + b, load<u8>(src + SCALAR_BYTES - 1 - b));
  }
  return verifyProof(out) == STATUS_OK ? PROVER_OK : PROVER_SELF_CHECK;
}

/** One proof: io holds witness ‖ r ‖ s ‖ −r·s; on PROVER_OK it holds proof ‖ public inputs. */
export function prove(): i32 {
  const s = stageWitness();
  if (s != PROVER_OK) return s;
  stageQuotient();
  for (let set = 0; set < SETS; set++) stageMsm(set);
  return stageFinish();
}

/** Sizes the loader needs to lay out prove()'s input. */
export function headerPointsBytes(): i32 {
  return <i32>HEADER_POINTS_BYTES;
}

// --- for the test build (prover-testing.ts) ----------------------------------------------

/** Copies the last proof's H scalars (domainSize little-endian scalars) into the I/O buffer. */
export function readQuotient(): usize {
  const out = io(<u32>(domainSize * SCALAR_SIZE));
  memory.copy(out, hScalars, domainSize * SCALAR_SIZE);
  return domainSize;
}

/** Writes one MSM result (with its set's fixed terms, see the file comment) in the wire form (G1 64 bytes, G2 128; all zero for infinity) into the I/O buffer. */
export function readMsm(set: i32): i32 {
  const g2 = set == SET_B2;
  const out = io(<u32>(g2 ? 128 : 64));
  if (g2) {
    if (!jToAffine(true, AFFINE_B, result(set))) memory.fill(out, 0, 128);
    else g2ToBytes(out, AFFINE_B);
  } else {
    if (!jToAffine(false, AFFINE_C, result(set))) memory.fill(out, 0, 64);
    else g1ToBytes(out, AFFINE_C);
  }
  return g2 ? 128 : 64;
}

/** The window width a base set was built with. */
export function basesWindow(set: i32): i32 {
  return bases[set].window;
}
