// Fixed-base multi-scalar multiplication Σ sᵢ·Pᵢ over G1 or G2, for the
// prover: the bases are the zkey's points, fixed for the life of a key, the
// scalars change with every proof.
//
// Method: Pippenger's bucket method (Pippenger 1980, "On the evaluation of
// powers and monomials"; as analysed for curves in Bernstein, Doumen, Lange,
// Oosterwijk, "Faster batch forgery identification", INDOCRYPT 2012), in
// three variations:
//
//  1. Precomputed window multiples. At load, each base P gets the table
//     T[P][j] = 2^(c·j)·P, j < W = ⌈255/c⌉ (affine). A scalar s = Σ dⱼ·2^(c·j)
//     then contributes dⱼ·T[P][j] for every window, so ALL windows share one
//     set of buckets and one bucket reduction, and the prove-time work has no
//     doublings at all (the doublings were paid once, at load).
//  2. Signed digits dⱼ ∈ [−2^(c−1), 2^(c−1)] (balanced radix-2^c recoding:
//     a window above 2^(c−1) becomes window − 2^c and carries one into the
//     next; cf. the signed windows of Hankerson, Menezes, Vanstone, "Guide to
//     Elliptic Curve Cryptography", 2004, §3.3): −P costs a negation, so
//     2^(c−1) buckets suffice instead of 2^c − 1.
//  3. Batch-affine bucket accumulation: each bucket's points are summed by a
//     pairwise tree, one level at a time, and every affine addition of a level
//     (across all buckets) shares ONE field inversion by Montgomery's trick
//     (Montgomery 1987, "Speeding the Pollard and elliptic curve methods of
//     factorization", §10.3.1): 3 multiplications per element plus one
//     inversion per level. An affine addition then costs about 6
//     multiplications against 11 for a mixed Jacobian one. Over Fp2 (G2)
//     the trick runs on the denominators' norms in Fp (1/d = d̄/N(d)):
//     7 Fp multiplications per element instead of 3 Fp2 ones (≈ 11).
//
// The buckets B₁..B_M (M = 2^(c−1)) are then combined as Σ b·B_b with the
// usual running sum from the top (2 additions per bucket, Jacobian); in G2,
// where those additions cost most, by running sums over segments of buckets
// whose affine additions share inversions (reduceBucketsBatched).
//
// Without tables (Bases.tables = false: a prover that proves once should not
// pay ≈ 255 doublings per base at load), each window j gets its own M
// buckets — all W·M of them still summed by the same batch-affine trees —
// and the window sums are combined by Horner's rule, c doublings apart:
// the textbook Pippenger, at about twice the additions per proof.
//
// The window width c minimises k·W + 4·2^(c−1) for k bases (the weight 4
// is the cost of a reduction step, two Jacobian additions, in affine
// additions). Does not handle the point at infinity as a base (the loader
// skips such bases: they contribute nothing). Timing depends on the scalars;
// the prover runs on the agent's own machine, which is the usual Groth16
// model (snarkjs's multiexp is not constant-time either).

import { FP_SIZE, fpMul, fpSqr, fpSub, fpAdd, fpInv, fpNeg, fpIsZero, fpEq, fpSetOne } from "./fp";
import { FP2_SIZE, fp2Mul, fp2Sqr, fp2Sub, fp2Add, fp2Inv, fp2Neg, fp2IsZero, fp2Eq, fp2SetOne } from "./fp2";
import {
  g1Double, g1AddMixed, g1Add, g1JacobianIsInfinity, g1JacobianSetInfinity, g1JacobianFromAffine, g1ToAffine,
} from "./g1";
import {
  g2Double, g2AddMixed, g2Add, g2JacobianIsInfinity, g2JacobianSetInfinity, g2JacobianFromAffine, g2ToAffine,
} from "./g2";

/** Scalars are 256-bit little-endian integers (four u64 words), < r < 2^254. */
export const SCALAR_SIZE: usize = 32;
/** Bits covered by the windows: 255 so that the signed recoding's final carry fits (r < 2^254). */
const SCALAR_BITS: i32 = 255;
const MIN_WINDOW: i32 = 2;
/** The widest window (2^15 buckets); loadBases refuses a wider one. */
export const MAX_WINDOW: i32 = 16;
/** Cost of one bucket-reduction step (two Jacobian additions) in affine additions. */
const REDUCTION_WEIGHT: i32 = 4;
const U32: usize = 4;
/** Scalars are read as u64 words. */
const WORD_BYTES: usize = 8;

// --- the field and group of a base set (G1 over Fp, G2 over Fp2) --------------------

/** Element size: Fp or Fp2. */
// @ts-ignore: decorator
@inline export function elemSize(g2: bool): usize {
  return g2 ? FP2_SIZE : FP_SIZE;
}
// @ts-ignore: decorator
@inline function fMul(g2: bool, o: usize, a: usize, b: usize): void {
  if (g2) fp2Mul(o, a, b);
  else fpMul(o, a, b);
}
// @ts-ignore: decorator
@inline function fSqr(g2: bool, o: usize, a: usize): void {
  if (g2) fp2Sqr(o, a);
  else fpSqr(o, a);
}
// @ts-ignore: decorator
@inline function fSub(g2: bool, o: usize, a: usize, b: usize): void {
  if (g2) fp2Sub(o, a, b);
  else fpSub(o, a, b);
}
// @ts-ignore: decorator
@inline function fAdd(g2: bool, o: usize, a: usize, b: usize): void {
  if (g2) fp2Add(o, a, b);
  else fpAdd(o, a, b);
}
// @ts-ignore: decorator
@inline function fInv(g2: bool, o: usize, a: usize): void {
  if (g2) fp2Inv(o, a);
  else fpInv(o, a);
}
// @ts-ignore: decorator
@inline function fNeg(g2: bool, o: usize, a: usize): void {
  if (g2) fp2Neg(o, a);
  else fpNeg(o, a);
}
// @ts-ignore: decorator
@inline function fIsZero(g2: bool, a: usize): bool {
  return g2 ? fp2IsZero(a) : fpIsZero(a);
}
// @ts-ignore: decorator
@inline function fEq(g2: bool, a: usize, b: usize): bool {
  return g2 ? fp2Eq(a, b) : fpEq(a, b);
}
// @ts-ignore: decorator
@inline function fSetOne(g2: bool, o: usize): void {
  if (g2) fp2SetOne(o);
  else fpSetOne(o);
}
// Jacobian points (X, Y, Z) at offsets 0, E, 2E; affine (x, y) at 0, E.
// @ts-ignore: decorator
@inline export function jIsInfinity(g2: bool, p: usize): bool {
  return g2 ? g2JacobianIsInfinity(p) : g1JacobianIsInfinity(p);
}
// @ts-ignore: decorator
@inline export function jSetInfinity(g2: bool, p: usize): void {
  if (g2) g2JacobianSetInfinity(p);
  else g1JacobianSetInfinity(p);
}
// @ts-ignore: decorator
@inline export function jDouble(g2: bool, o: usize, p: usize): void {
  if (g2) g2Double(o, p);
  else g1Double(o, p);
}
// @ts-ignore: decorator
@inline export function jAddAffine(g2: bool, o: usize, p: usize, q: usize): void {
  if (g2) g2AddMixed(o, p, q);
  else g1AddMixed(o, p, q);
}
// @ts-ignore: decorator
@inline export function jAdd(g2: bool, o: usize, p: usize, q: usize): void {
  if (g2) g2Add(o, p, q);
  else g1Add(o, p, q);
}
// @ts-ignore: decorator
@inline export function jFromAffine(g2: bool, o: usize, a: usize): void {
  if (g2) g2JacobianFromAffine(o, a);
  else g1JacobianFromAffine(o, a);
}

// --- scratch (grown at load, never at prove time) -------------------------------------

const SCRATCH_PARTS: i32 = 10;
const scratchBase = new StaticArray<usize>(SCRATCH_PARTS);
const scratchSize = new StaticArray<usize>(SCRATCH_PARTS);
const S_SLOTS: i32 = 0; // affine points, bucket by bucket
const S_OPS: i32 = 1; // u32 per op: bucket index
const S_ENTRIES: i32 = 2; // u32 per op: table entry << 1 | negate
const S_DEN: i32 = 3; // field elements: the level's denominators, then their inverses
const S_PRE: i32 = 4; // field elements: prefix products
const S_BUCKETS: i32 = 5; // u32 × 3 per bucket: count, start, fill
const S_BUILD_JACOBIAN: i32 = 6; // load time: the Jacobian window multiples before normalisation
const S_BUILD_PREFIX: i32 = 7; // load time: their Z prefix products
const S_SEGMENTS: i32 = 8; // the batched reduction: per segment R, U (affine) and their infinity flags
const S_PAIRS: i32 = 9; // the batched reduction: a round's (accumulator, point) address pairs

function reserve(part: i32, size: usize): void {
  if (size > scratchSize[part]) {
    scratchBase[part] = heap.alloc(size);
    scratchSize[part] = size;
  }
}
// @ts-ignore: decorator
@inline function part(p: i32): usize {
  return scratchBase[p];
}

const TX: usize = memory.data(<i32>FP2_SIZE, 4);
const TY: usize = memory.data(<i32>FP2_SIZE, 4);
const LAMBDA: usize = memory.data(<i32>FP2_SIZE, 4);
const ACC: usize = memory.data(<i32>FP2_SIZE, 4);
const TMP: usize = memory.data(<i32>FP2_SIZE, 4);
const RUN: usize = memory.data(<i32>(3 * FP2_SIZE), 4);

// --- base sets --------------------------------------------------------------------------

/** A loaded base set: k non-zero bases, their scalar indices and window tables. */
export class Bases {
  g2: bool = false;
  count: i32 = 0;
  /** Window width c and window count W. */
  window: i32 = 0;
  windows: i32 = 0;
  /** u32 per base: which scalar multiplies it. */
  scalarIndex: usize = 0;
  /** With tables: count × W affine points, entry p·W + j is 2^(c·j)·P_p. Without: the count bases. */
  table: usize = 0;
  tables: bool = true;
}

/**
 * The window width minimising k·⌈255/c⌉ + 4·2^(c−1) (see the file comment);
 * without tables every window has its own buckets: k·W + 4·W·2^(c−1).
 */
export function chooseWindow(k: i32, tables: bool): i32 {
  let best = MIN_WINDOW;
  let bestCost = i64.MAX_VALUE;
  for (let c = MIN_WINDOW; c <= MAX_WINDOW; c++) {
    const w = (SCALAR_BITS + c - 1) / c;
    const reductions = tables ? 1 : w;
    const cost = (k as i64) * (w as i64) + (REDUCTION_WEIGHT as i64) * (reductions as i64) * ((1 as i64) << ((c - 1) as i64));
    if (cost < bestCost) {
      bestCost = cost;
      best = c;
    }
  }
  return best;
}

/**
 * Sets up k affine bases (at points, stride 2E) whose scalars are
 * scalarIndex[0..k), with their window tables when `tables`. Returns false
 * when a multiple reaches infinity (a base of small order: not a G1/G2 point
 * of a valid key). fromCaller: the table is allocated but not computed, the
 * caller copies in one that this function computed earlier for the same
 * points and window (the prover's table cache, src/prover/tables.ts).
 */
export function basesBuild(b: Bases, g2: bool, points: usize, k: i32, scalarIndex: usize, window: i32, tables: bool, fromCaller: bool = false): bool {
  const E = elemSize(g2);
  const A = 2 * E; // affine size
  const J = 3 * E; // Jacobian size
  b.g2 = g2;
  b.count = k;
  b.tables = tables;
  b.window = window > 0 ? window : chooseWindow(k, tables);
  b.windows = (SCALAR_BITS + b.window - 1) / b.window;
  b.scalarIndex = scalarIndex;
  const W = <usize>b.windows;
  const entries = <usize>k * W;
  const M = (<usize>1) << <usize>(b.window - 1);
  // Prove-time scratch for this set: one op (and slot) per base and window.
  reserve(S_SLOTS, max<usize>(entries, 1) * A);
  reserve(S_OPS, max<usize>(entries, 1) * U32);
  reserve(S_ENTRIES, max<usize>(entries, 1) * U32);
  reserve(S_DEN, max<usize>(entries, 1) * E);
  reserve(S_PRE, max<usize>(entries, 1) * E);
  reserve(S_BUCKETS, (tables ? M : M * W) * 3 * U32);
  if (batchedReduction(g2, M)) {
    const L = M / SEGMENT;
    reserve(S_SEGMENTS, L * (2 * A + 2 * U32));
    reserve(S_PAIRS, L * 2 * U32);
    reserve(S_DEN, max<usize>(entries, L) * E);
    reserve(S_PRE, max<usize>(entries, L) * E);
  }
  if (!tables) {
    b.table = points;
    return true;
  }
  b.table = heap.alloc(max<usize>(entries, 1) * A);
  if (fromCaller) return true; // the caller writes the table (a copy of one this function built before)
  // Jacobian multiples first, then one batch normalisation (Montgomery's trick).
  // (Scratch shared by every set: the stub runtime never frees, so per-set buffers would add up.)
  reserve(S_BUILD_JACOBIAN, max<usize>(entries, 1) * J);
  reserve(S_BUILD_PREFIX, max<usize>(entries, 1) * E);
  const jac = part(S_BUILD_JACOBIAN);
  const pre = part(S_BUILD_PREFIX);
  for (let p: usize = 0; p < <usize>k; p++) {
    const P = points + p * A;
    const row = jac + p * W * J;
    jFromAffine(g2, row, P);
    for (let j: usize = 1; j < W; j++) {
      const cur = row + j * J;
      memory.copy(cur, cur - J, J);
      for (let d = 0; d < b.window; d++) jDouble(g2, cur, cur);
      if (jIsInfinity(g2, cur)) return false;
    }
  }
  // prefix products of Z
  for (let e: usize = 0; e < entries; e++) {
    const z = jac + e * J + 2 * E;
    if (e == 0) memory.copy(pre, z, E);
    else fMul(g2, pre + e * E, pre + (e - 1) * E, z);
  }
  if (entries > 0) fInv(g2, ACC, pre + (entries - 1) * E);
  for (let e = <isize>entries - 1; e >= 0; e--) {
    const src = jac + <usize>e * J;
    const z = src + 2 * E;
    // zinv = ACC·pre[e−1]; ACC ·= z
    if (e > 0) fMul(g2, TMP, ACC, pre + (<usize>e - 1) * E);
    else memory.copy(TMP, ACC, E);
    if (e > 0) fMul(g2, ACC, ACC, z);
    const dst = b.table + <usize>e * A;
    fSqr(g2, LAMBDA, TMP); // z⁻²
    fMul(g2, dst, src, LAMBDA); // x = X/Z²
    fMul(g2, LAMBDA, LAMBDA, TMP); // z⁻³
    fMul(g2, dst + E, src + E, LAMBDA); // y = Y/Z³
  }
  return true;
}

/** Bytes of a base set's table (with tables: count × W affine points). */
export function basesTableBytes(b: Bases): usize {
  return b.tables ? <usize>b.count * <usize>b.windows * 2 * elemSize(b.g2) : 0;
}

/** Signed window j of the scalar at s (c-bit window plus carry in, as described above). */
// @ts-ignore: decorator
@inline function windowBits(s: usize, bit: i32, c: i32): u32 {
  const w = <usize>(bit >> 6);
  if (w >= 4) return 0;
  const sh = (bit & 63) as u64;
  let v = load<u64>(s + w * WORD_BYTES) >> sh;
  if (sh + (c as u64) > 64 && w < 3) v |= load<u64>(s + (w + 1) * WORD_BYTES) << (64 - sh);
  return (v as u32) & ((1 << (c as u32)) - 1);
}

const VIEW = new Bases();

/** out = Σ over bases lo..hi−1 of b only (the sum of the ranges of a partition is msm(out, b, scalars)). */
export function msmRange(out: usize, b: Bases, scalars: usize, lo: i32, hi: i32): void {
  if (lo == 0 && hi == b.count) {
    msm(out, b, scalars);
    return;
  }
  // A view of the range: its rows of the table (or its points) and its scalar indices.
  const A = 2 * elemSize(b.g2);
  VIEW.g2 = b.g2;
  VIEW.count = hi - lo;
  VIEW.window = b.window;
  VIEW.windows = b.windows;
  VIEW.tables = b.tables;
  VIEW.scalarIndex = b.scalarIndex + <usize>lo * U32;
  VIEW.table = b.table + <usize>lo * (b.tables ? <usize>b.windows : 1) * A;
  msm(out, VIEW, scalars);
}

/** out (Jacobian) = Σ s_p·P_p, scalars at scalars + scalarIndex[p]·32 (little-endian words). */
export function msm(out: usize, b: Bases, scalars: usize): void {
  const g2 = b.g2;
  const E = elemSize(g2);
  const A = 2 * E;
  const c = b.window;
  const W = b.windows;
  const M = (<usize>1) << <usize>(c - 1);
  const tables = b.tables;
  const buckets = tables ? M : M * <usize>W; // without tables, window j owns buckets j·M .. j·M + M − 1
  const half = <u32>M;
  const full = (<i32>1) << c;
  const counts = part(S_BUCKETS);
  const starts = counts + buckets * U32;
  const fills = starts + buckets * U32;
  memory.fill(counts, 0, buckets * U32);

  // 1. Recode every scalar into signed digits; one op per non-zero digit.
  const opBucket = part(S_OPS);
  const opEntry = part(S_ENTRIES);
  let ops: usize = 0;
  for (let p = 0; p < b.count; p++) {
    const s = scalars + <usize>load<u32>(b.scalarIndex + <usize>p * U32) * SCALAR_SIZE;
    let carry: u32 = 0;
    for (let j = 0; j < W; j++) {
      let v = <i32>(windowBits(s, j * c, c) + carry);
      carry = 0;
      if (<u32>v > half) {
        v -= full;
        carry = 1;
      }
      if (v == 0) continue;
      const neg: u32 = v < 0 ? 1 : 0;
      const bucket = <u32>(v < 0 ? -v : v) - 1 + (tables ? 0 : <u32>j * half);
      store<u32>(opBucket + ops * U32, bucket);
      store<u32>(opEntry + ops * U32, ((<u32>(tables ? p * W + j : p)) << 1) | neg);
      store<u32>(counts + <usize>bucket * U32, load<u32>(counts + <usize>bucket * U32) + 1);
      ops++;
    }
  }

  // 2. Counting sort of the ops by bucket into the slots (negating where the digit is negative).
  let at: u32 = 0;
  for (let k: usize = 0; k < buckets; k++) {
    store<u32>(starts + k * U32, at);
    store<u32>(fills + k * U32, 0);
    at += load<u32>(counts + k * U32);
  }
  const slots = part(S_SLOTS);
  for (let o: usize = 0; o < ops; o++) {
    const bucket = <usize>load<u32>(opBucket + o * U32);
    const e = load<u32>(opEntry + o * U32);
    const fill = load<u32>(fills + bucket * U32);
    store<u32>(fills + bucket * U32, fill + 1);
    const dst = slots + <usize>(load<u32>(starts + bucket * U32) + fill) * A;
    const src = b.table + <usize>(e >> 1) * A;
    memory.copy(dst, src, E);
    if (e & 1) fNeg(g2, dst + E, src + E);
    else memory.copy(dst + E, src + E, E);
  }

  // 3. Pairwise tree sums inside each bucket, one shared inversion per level.
  const den = part(S_DEN);
  const pre = part(S_PRE);
  for (;;) {
    let t: usize = 0;
    for (let k: usize = 0; k < buckets; k++) {
      const len = <usize>load<u32>(counts + k * U32);
      if (len < 2) continue;
      const base = slots + <usize>load<u32>(starts + k * U32) * A;
      for (let i: usize = 0; i + 1 < len; i += 2) {
        const P = base + i * A;
        const Q = P + A;
        const d = den + t * E;
        fSub(g2, d, Q, P); // x_Q − x_P
        if (fIsZero(g2, d)) fSetOne(g2, d); // P = ±Q: handled on its own below
        t++;
      }
    }
    if (t == 0) break;
    invertBatch(g2, den, pre, t);

    t = 0;
    for (let k: usize = 0; k < buckets; k++) {
      const len = <usize>load<u32>(counts + k * U32);
      if (len < 2) continue;
      const base = slots + <usize>load<u32>(starts + k * U32) * A;
      let w: usize = 0;
      for (let i: usize = 0; i + 1 < len; i += 2) {
        const P = base + i * A;
        const Q = P + A;
        const inv = den + t * E;
        t++;
        // The pair's sum replaces it, compacted to the front (the pair vanishes when Q = −P).
        if (affineAdd(g2, base + w * A, P, Q, inv)) w++;
      }
      if (len & 1) {
        memory.copy(base + w * A, base + (len - 1) * A, A);
        w++;
      }
      store<u32>(counts + k * U32, <u32>w);
    }
  }

  // 4. Σ b·B_b by running sums from the top bucket down; without tables, per
  //    window, the windows combined from the top by Horner's rule.
  if (tables) {
    reduce(g2, out, counts, starts, slots, 0, M);
    return;
  }
  jSetInfinity(g2, out);
  for (let j = W - 1; j >= 0; j--) {
    if (!jIsInfinity(g2, out)) for (let d = 0; d < c; d++) jDouble(g2, out, out);
    reduce(g2, WINDOW_SUM, counts, starts, slots, <usize>j * M, M);
    jAdd(g2, out, out, WINDOW_SUM);
  }
}

/** Σ (b + 1)·bucket[first + b]: batched where that was measured to pay (batchedReduction). */
// @ts-ignore: decorator
@inline function reduce(g2: bool, out: usize, counts: usize, starts: usize, slots: usize, first: usize, M: usize): void {
  if (batchedReduction(g2, M)) reduceBucketsBatched(g2, out, counts, starts, slots, first, M);
  else reduceBuckets(g2, out, counts, starts, slots, first, M);
}

const NORM_ACC: usize = memory.data(<i32>FP_SIZE, 4);
const NORM_INV: usize = memory.data(<i32>FP_SIZE, 4);

/** den[0..t) (none zero) ← their inverses, one field inversion for all (pre: t elements of scratch). */
// Inlined so that g1InvertBatch has two callers and survives as a function for the wide build's splice.
// @ts-ignore: decorator
@inline function invertBatch(g2: bool, den: usize, pre: usize, t: usize): void {
  if (g2) {
    invertFp2ByNorms(den, pre, t);
    return;
  }
  g1InvertBatch(den, pre, t);
}

/**
 * den[0..t) (Fp, none zero, t ≥ 1) ← their inverses by Montgomery's trick:
 * prefix products, one inversion, then back. The wide build replaces this
 * function (assembly/wide.wat) with one that keeps the prefix products as
 * 32-byte words and needs pre to hold 32t + 36 bytes: the callers' t (pairs
 * of a tree level) is at most half the slots that pre was reserved for, at
 * 36 bytes each, so 32t + 36 ≤ 36·2t for t ≥ 1.
 */
export function g1InvertBatch(den: usize, pre: usize, t: usize): void {
  memory.copy(pre, den, FP_SIZE);
  for (let i: usize = 1; i < t; i++) fpMul(pre + i * FP_SIZE, pre + (i - 1) * FP_SIZE, den + i * FP_SIZE);
  fpInv(ACC, pre + (t - 1) * FP_SIZE);
  for (let i = <isize>t - 1; i > 0; i--) {
    const d = den + <usize>i * FP_SIZE;
    fpMul(TMP, ACC, pre + (<usize>i - 1) * FP_SIZE); // 1/dᵢ
    fpMul(ACC, ACC, d);
    memory.copy(d, TMP, FP_SIZE);
  }
  memory.copy(den, ACC, FP_SIZE);
}

/**
 * den[0..t) (Fp2, none zero) ← their inverses, by Montgomery's trick over
 * their norms in Fp: 1/d = d̄ / N(d), N(d) = d₀² + d₁² ∈ Fp (the inverse of
 * fp2Inv, batched). Per element: the norm (2 squarings), 3 Fp
 * multiplications for the batch and 2 for d̄·N⁻¹ — 7 Fp multiplications
 * against 3 Fp2 ones (≈ 11) for the same trick over Fp2; one Fp inversion
 * for all. pre holds t Fp2-sized slots of scratch: the prefix product in the
 * first half, the norm in the second.
 */
export function invertFp2ByNorms(den: usize, pre: usize, t: usize): void {
  for (let i: usize = 0; i < t; i++) {
    const d = den + i * FP2_SIZE;
    const slot = pre + i * FP2_SIZE;
    const norm = slot + FP_SIZE;
    fpSqr(norm, d);
    fpSqr(NORM_ACC, d + FP_SIZE);
    fpAdd(norm, norm, NORM_ACC);
    if (i == 0) memory.copy(slot, norm, FP_SIZE);
    else fpMul(slot, slot - FP2_SIZE, norm);
  }
  fpInv(NORM_ACC, pre + (t - 1) * FP2_SIZE);
  for (let i = <isize>t - 1; i >= 0; i--) {
    const d = den + <usize>i * FP2_SIZE;
    const slot = pre + <usize>i * FP2_SIZE;
    if (i > 0) {
      fpMul(NORM_INV, NORM_ACC, slot - FP2_SIZE); // 1/N(dᵢ)
      fpMul(NORM_ACC, NORM_ACC, slot + FP_SIZE);
    } else memory.copy(NORM_INV, NORM_ACC, FP_SIZE);
    fpMul(d, d, NORM_INV);
    fpMul(d + FP_SIZE, d + FP_SIZE, NORM_INV);
    fpNeg(d + FP_SIZE, d + FP_SIZE); // d̄ / N(d)
  }
}

// --- the bucket reduction, batched ---------------------------------------------------------
//
// Σ (b + 1)·B_b over M buckets by running sums costs two Jacobian additions
// per bucket (≈ 27 multiplications in G1, ≈ 27 Fp2 ones in G2). Batched: the
// buckets are cut into L = M / SEGMENT segments of SEGMENT buckets, and all
// segments run their running sums in lockstep from their top bucket down —
// R_j += B (the segment's suffix sum), then U_j += R_j — so that the L
// additions of each step are affine and share one inversion (Montgomery's
// trick, as in the bucket trees). At the end R_j = Σ_i B_{jm+i} and
// U_j = Σ_i (i + 1)·B_{jm+i} (m = SEGMENT), and since bucket jm + i weighs
// (i + 1) + j·m:  Σ = Σ_j U_j + m·Σ_j j·R_j, the last sum by one short
// Jacobian running sum over the L segments and log₂ m doublings.
// (Running sums over groups of buckets with batched affine additions: the
// reduction of the ZPrize 2022 MSM entries, e.g. Aztec's barretenberg and
// gnark's batch-affine Pippenger; written here from the identity above.)

/**
 * In G2, with enough buckets for L = M / SEGMENT additions to share each
 * inversion. (In G1 the Jacobian running sum is cheap enough: MSM A at
 * Semaphore depth 20, 112.3 ms plain against 114.3 batched, same process,
 * alternating; B2 237.5 → 214.6 ms.)
 */
// @ts-ignore: decorator
@inline function batchedReduction(g2: bool, M: usize): bool {
  return g2 && M >= BATCHED_REDUCTION_MIN;
}

/** Buckets per segment of the batched reduction (m). */
const SEGMENT: usize = 16;
const SEGMENT_LOG: i32 = 4;
/** Fewer buckets than this: plain running sums (L = M / m segments per inversion would not repay it). */
const BATCHED_REDUCTION_MIN: usize = 2048;
const SUM_U: usize = memory.data(<i32>(3 * FP2_SIZE), 4);
const SUM_RUN: usize = memory.data(<i32>(3 * FP2_SIZE), 4);

/**
 * acc[k] += pt[k] for the n (accumulator, point) address pairs at pairs,
 * affine, one shared inversion; an accumulator that becomes infinity gets
 * its flag (at acc + 2E, a u32) set. Neither side is infinity on entry.
 */
function batchAddAffine(g2: bool, pairs: usize, n: usize): void {
  if (n == 0) return;
  const E = elemSize(g2);
  const den = part(S_DEN);
  for (let k: usize = 0; k < n; k++) {
    const acc = <usize>load<u32>(pairs + 2 * k * U32);
    const pt = <usize>load<u32>(pairs + (2 * k + 1) * U32);
    const d = den + k * E;
    fSub(g2, d, pt, acc);
    if (fIsZero(g2, d)) fSetOne(g2, d); // same x: handled on its own below
  }
  invertBatch(g2, den, part(S_PRE), n);
  for (let k: usize = 0; k < n; k++) {
    const acc = <usize>load<u32>(pairs + 2 * k * U32);
    const pt = <usize>load<u32>(pairs + (2 * k + 1) * U32);
    if (!affineAdd(g2, acc, acc, pt, den + k * E)) store<u32>(acc + 2 * E, 1); // the sum vanished
  }
}

/**
 * acc += point for batchAddAffine: an accumulator at infinity (its flag, at
 * acc + A) just takes the point; otherwise the pair is queued. Returns the
 * new count of queued pairs.
 */
// @ts-ignore: decorator
@inline function queueAdd(acc: usize, point: usize, A: usize, pairs: usize, n: usize): usize {
  if (load<u32>(acc + A)) {
    memory.copy(acc, point, A);
    store<u32>(acc + A, 0);
    return n;
  }
  store<u32>(pairs + 2 * n * U32, <u32>acc);
  store<u32>(pairs + (2 * n + 1) * U32, <u32>point);
  return n + 1;
}

/** out = Σ_{b < M} (b + 1)·bucket[first + b], each bucket holding 0 or 1 affine point; M a multiple of SEGMENT. */
function reduceBucketsBatched(g2: bool, out: usize, counts: usize, starts: usize, slots: usize, first: usize, M: usize): void {
  const E = elemSize(g2);
  const A = 2 * E;
  const S = A + U32; // a segment accumulator: affine point, then its infinity flag
  const L = M / SEGMENT;
  const R = part(S_SEGMENTS);
  const U = R + L * S;
  const pairs = part(S_PAIRS);
  for (let j: usize = 0; j < L; j++) {
    store<u32>(R + j * S + A, 1);
    store<u32>(U + j * S + A, 1);
  }
  for (let i = <isize>SEGMENT - 1; i >= 0; i--) {
    // R_j += B_{jm+i}
    let n: usize = 0;
    for (let j: usize = 0; j < L; j++) {
      const bucket = first + j * SEGMENT + <usize>i;
      if (load<u32>(counts + bucket * U32) != 1) continue;
      n = queueAdd(R + j * S, slots + <usize>load<u32>(starts + bucket * U32) * A, A, pairs, n);
    }
    batchAddAffine(g2, pairs, n);
    // U_j += R_j
    n = 0;
    for (let j: usize = 0; j < L; j++) {
      const r = R + j * S;
      if (!load<u32>(r + A)) n = queueAdd(U + j * S, r, A, pairs, n);
    }
    batchAddAffine(g2, pairs, n);
  }
  // Σ_j U_j + m·Σ_j j·R_j
  jSetInfinity(g2, SUM_U);
  jSetInfinity(g2, SUM_RUN);
  jSetInfinity(g2, out);
  for (let j = <isize>L - 1; j >= 0; j--) {
    const u = U + <usize>j * S;
    if (!load<u32>(u + A)) jAddAffine(g2, SUM_U, SUM_U, u);
    if (j == 0) break;
    const r = R + <usize>j * S;
    if (!load<u32>(r + A)) jAddAffine(g2, SUM_RUN, SUM_RUN, r);
    jAdd(g2, out, out, SUM_RUN);
  }
  for (let d = 0; d < SEGMENT_LOG; d++) if (!jIsInfinity(g2, out)) jDouble(g2, out, out);
  jAdd(g2, out, out, SUM_U);
}

/**
 * dst = P + Q (affine, neither infinity), given inv = 1/(x_Q − x_P) from a
 * batch inversion. Same x: Q = P is doubled (with its own inversion; rare),
 * Q = −P gives false — the sum is infinity and dst is left as it was. dst
 * may alias P or Q (written last).
 */
// @ts-ignore: decorator
@inline function affineAdd(g2: bool, dst: usize, P: usize, Q: usize, inv: usize): bool {
  const E = elemSize(g2);
  if (!g2 && !fpEq(P, Q)) {
    g1AddChord(dst, P, Q, inv);
    return true;
  }
  if (fEq(g2, P, Q)) {
    if (!fEq(g2, P + E, Q + E) || fIsZero(g2, P + E)) return false;
    fSqr(g2, TMP, P); // λ = 3x²/(2y)
    fAdd(g2, LAMBDA, TMP, TMP);
    fAdd(g2, LAMBDA, LAMBDA, TMP);
    fAdd(g2, TMP, P + E, P + E);
    fInv(g2, TMP, TMP);
    fMul(g2, LAMBDA, LAMBDA, TMP);
  } else {
    fSub(g2, LAMBDA, Q + E, P + E);
    fMul(g2, LAMBDA, LAMBDA, inv); // λ = (y_Q − y_P)/(x_Q − x_P)
  }
  fSqr(g2, TX, LAMBDA);
  fSub(g2, TX, TX, P);
  fSub(g2, TX, TX, Q); // x₃ = λ² − x_P − x_Q
  fSub(g2, TY, P, TX);
  fMul(g2, TY, TY, LAMBDA);
  fSub(g2, TY, TY, P + E); // y₃ = λ(x_P − x₃) − y_P
  memory.copy(dst, TX, E);
  memory.copy(dst + E, TY, E);
  return true;
}

/**
 * dst = P + Q in G1 (affine, x_P ≠ x_Q), given inv = 1/(x_Q − x_P): the
 * chord step of affineAdd, on its own so that the wide build replaces it
 * (assembly/wide.wat: each coordinate packed once, λ kept in words, the
 * subtractions done on words). dst may alias P or Q (written last).
 */
export function g1AddChord(dst: usize, P: usize, Q: usize, inv: usize): void {
  fpSub(LAMBDA, Q + FP_SIZE, P + FP_SIZE);
  fpMul(LAMBDA, LAMBDA, inv); // λ = (y_Q − y_P)/(x_Q − x_P)
  fpSqr(TX, LAMBDA);
  fpSub(TX, TX, P);
  fpSub(TX, TX, Q); // x₃ = λ² − x_P − x_Q
  fpSub(TY, P, TX);
  fpMul(TY, TY, LAMBDA);
  fpSub(TY, TY, P + FP_SIZE); // y₃ = λ(x_P − x₃) − y_P
  memory.copy(dst, TX, FP_SIZE);
  memory.copy(dst + FP_SIZE, TY, FP_SIZE);
}

const WINDOW_SUM: usize = memory.data(<i32>(3 * FP2_SIZE), 4);

/** out = Σ_{b < M} (b + 1)·bucket[first + b], each bucket holding 0 or 1 affine point. */
function reduceBuckets(g2: bool, out: usize, counts: usize, starts: usize, slots: usize, first: usize, M: usize): void {
  const A = 2 * elemSize(g2);
  jSetInfinity(g2, RUN);
  jSetInfinity(g2, out);
  for (let k = <isize>M - 1; k >= 0; k--) {
    const bucket = first + <usize>k;
    if (load<u32>(counts + bucket * U32) == 1) jAddAffine(g2, RUN, RUN, slots + <usize>load<u32>(starts + bucket * U32) * A);
    jAdd(g2, out, out, RUN);
  }
}

/**
 * out (Jacobian) = Σ sᵢ·Pᵢ for a few affine points (n ≤ 4 in practice: the
 * blinding terms), by one shared double-and-add chain (Straus 1964, "Addition
 * chains of vectors"). Scalars are little-endian words, entries of stride 32.
 */
export function msmSmall(out: usize, g2: bool, points: usize, scalars: usize, n: i32): void {
  const A = 2 * elemSize(g2);
  jSetInfinity(g2, out);
  for (let bit = 255; bit >= 0; bit--) {
    if (!jIsInfinity(g2, out)) jDouble(g2, out, out);
    for (let i = 0; i < n; i++) {
      const s = scalars + <usize>i * SCALAR_SIZE;
      if ((load<u64>(s + <usize>(bit >> 6) * WORD_BYTES) >> ((bit & 63) as u64)) & 1) jAddAffine(g2, out, out, points + <usize>i * A);
    }
  }
}

/** out = the affine form of the Jacobian p; false when p is infinity. */
export function jToAffine(g2: bool, out: usize, p: usize): bool {
  if (jIsInfinity(g2, p)) return false;
  if (g2) g2ToAffine(out, p);
  else g1ToAffine(out, p);
  return true;
}
