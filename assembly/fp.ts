// Fp — the BN254 base field, p = 21888242871839275222246405745257275088696311157297823662689037894645226208583.
//
// Representation: Montgomery form x·R mod p with R = 2^261, stored as 9
// little-endian limbs of 29 bits, one u32 per limb (FP_SIZE = 36 bytes).
// Every value is kept fully reduced in [0, p), so equality is limb equality.
//
// Why 29-bit limbs: WebAssembly has no 64×64→128 multiply. With 29-bit limbs a
// limb product has 58 bits and the 18 products that land in one column of the
// Montgomery multiplication sum to < 2^63, so the whole product accumulates in
// i64 without carry handling (the approach of the ZPrize 2022 wasm MSM
// entries, Mitscha-Baude). Measured here: ≈50 ns per multiplication under Bun.
//
// Operations are output-first (`fpMul(out, a, b)`) and allow out to alias an
// input. Nothing here allocates. Timing is data-dependent: the verifier only
// handles public data (proofs, keys, public inputs).

import {
  P0, P1, P2, P3, P4, P5, P6, P7, P8, MU,
  P_W0, P_W1, P_W2, P_W3,
  P_MINUS_2_W0, P_MINUS_2_W1, P_MINUS_2_W2, P_MINUS_2_W3,
  FP_ONE, FP_R2, FP_RAW_ONE,
} from "./constants";

export const LIMBS: i32 = 9;
export const LIMB_BITS: u64 = 29;
export const LIMB_BYTES: usize = 4;
export const FP_SIZE: usize = 36;
/** Big-endian encoding width of one field element (the ABI table, layout.ts). */
export { FP_BYTES } from "./layout";
export const MASK: u64 = 0x1fffffff;
export const MASK32: u32 = 0x1fffffff;

/** Limb i of a (0 ≤ i < 9), zero-extended. */
// @ts-ignore: decorator
@inline export function ld(a: usize, i: usize): u64 {
  return load<u32>(a + i * LIMB_BYTES) as u64;
}
// @ts-ignore: decorator
@inline export function st(a: usize, i: usize, v: u64): void {
  store<u32>(a + i * LIMB_BYTES, v as u32);
}
// @ts-ignore: decorator
@inline function pLimb(i: usize): u64 {
  return load<u32>(FP_P + i * LIMB_BYTES) as u64;
}

/** p in plain 29-bit limbs, for the loop-based add/sub. */
const FP_P: usize = memory.data<u32>([
  <u32>P0, <u32>P1, <u32>P2, <u32>P3, <u32>P4, <u32>P5, <u32>P6, <u32>P7, <u32>P8,
]);

/**
 * Stores the nine normalised limbs r0..r8 (value < 2p) reduced into [0, p):
 * one trial subtraction of p with a signed borrow chain, then a select.
 */
// @ts-ignore: decorator
@inline export function fpStoreReduced(
  out: usize,
  r0: u64, r1: u64, r2: u64, r3: u64, r4: u64, r5: u64, r6: u64, r7: u64, r8: u64,
): void {
  let d: i64 = (r0 as i64) - (P0 as i64);
  const s0 = d & (MASK as i64); d >>= 29;
  d += (r1 as i64) - (P1 as i64); const s1 = d & (MASK as i64); d >>= 29;
  d += (r2 as i64) - (P2 as i64); const s2 = d & (MASK as i64); d >>= 29;
  d += (r3 as i64) - (P3 as i64); const s3 = d & (MASK as i64); d >>= 29;
  d += (r4 as i64) - (P4 as i64); const s4 = d & (MASK as i64); d >>= 29;
  d += (r5 as i64) - (P5 as i64); const s5 = d & (MASK as i64); d >>= 29;
  d += (r6 as i64) - (P6 as i64); const s6 = d & (MASK as i64); d >>= 29;
  d += (r7 as i64) - (P7 as i64); const s7 = d & (MASK as i64); d >>= 29;
  d += (r8 as i64) - (P8 as i64);
  if (d < 0) {
    // r < p: keep r
    st(out, 0, r0); st(out, 1, r1); st(out, 2, r2); st(out, 3, r3); st(out, 4, r4);
    st(out, 5, r5); st(out, 6, r6); st(out, 7, r7); st(out, 8, r8);
  } else {
    st(out, 0, s0 as u64); st(out, 1, s1 as u64); st(out, 2, s2 as u64); st(out, 3, s3 as u64);
    st(out, 4, s4 as u64); st(out, 5, s5 as u64); st(out, 6, s6 as u64); st(out, 7, s7 as u64);
    st(out, 8, d as u64);
  }
}

/** (P8 + 1): dividing the top limb by it underestimates ⌊value/p⌋ by at most one (fpStoreSmall). */
const P_TOP_PLUS_ONE: i64 = (P8 as i64) + 1;

/**
 * Stores a value given as nine signed limb sums r0..r8 (value = Σ r_k·2^(29k),
 * 0 ≤ value < 64p), reduced into [0, p): the sums are carried (arithmetic
 * shifts), q = ⌊r8 / (P8 + 1)⌋ multiples of p are removed, and the rest
 * (< 2p) goes through fpStoreReduced. Why one quotient step suffices: with
 * D = P8 + 1, value < (r8 + 1)·2^232 and p ≥ P8·2^232, so
 * value − q·p < 2^232·(r8 − q·D + q + 1) ≤ 2^232·(D + q) ≤ 2^232·(2D − 2) ≤ 2p
 * whenever q ≤ D − 2, which holds (q < 64 ≪ P8). The fused linear forms of
 * fp2lin.ts end here.
 */
// @ts-ignore: decorator
@inline export function fpStoreSmall(
  out: usize,
  r0: i64, r1: i64, r2: i64, r3: i64, r4: i64, r5: i64, r6: i64, r7: i64, r8: i64,
): void {
  const M = MASK as i64;
  r1 += r0 >> 29; r0 &= M; r2 += r1 >> 29; r1 &= M; r3 += r2 >> 29; r2 &= M;
  r4 += r3 >> 29; r3 &= M; r5 += r4 >> 29; r4 &= M; r6 += r5 >> 29; r5 &= M;
  r7 += r6 >> 29; r6 &= M; r8 += r7 >> 29; r7 &= M;
  const q = r8 / P_TOP_PLUS_ONE;
  r0 -= q * (P0 as i64); r1 -= q * (P1 as i64); r2 -= q * (P2 as i64);
  r3 -= q * (P3 as i64); r4 -= q * (P4 as i64); r5 -= q * (P5 as i64);
  r6 -= q * (P6 as i64); r7 -= q * (P7 as i64); r8 -= q * (P8 as i64);
  r1 += r0 >> 29; r0 &= M; r2 += r1 >> 29; r1 &= M; r3 += r2 >> 29; r2 &= M;
  r4 += r3 >> 29; r3 &= M; r5 += r4 >> 29; r4 &= M; r6 += r5 >> 29; r5 &= M;
  r7 += r6 >> 29; r6 &= M; r8 += r7 >> 29; r7 &= M;
  fpStoreReduced(out, r0 as u64, r1 as u64, r2 as u64, r3 as u64, r4 as u64, r5 as u64, r6 as u64, r7 as u64, r8 as u64);
}

/**
 * out = a·b·R⁻¹ mod p. Operand-scanning Montgomery multiplication (Koç,
 * Acar, Kaliski 1996, "Analyzing and comparing Montgomery multiplication
 * algorithms", CIOS) with the carries of the 29-bit columns deferred: each
 * row adds a_i·b + m·p and shifts one limb; only the lowest column is
 * carried, because it must be divisible by 2^29. Inputs < 2p are allowed
 * (the result is still < 2p before the final subtraction since 4p² ≪ pR).
 */
export function fpMul(out: usize, a: usize, b: usize): void {
  fpMulBody(out, a, b);
}

/**
 * out = a² (Montgomery): fpMul's body, as a function of its own so that the
 * wide build can replace it with a dedicated squaring (assembly/wide.wat: 10
 * word products instead of 16). In this build it is the same CIOS product.
 */
export function fpSqr(out: usize, a: usize): void {
  fpMulBody(out, a, a);
}

/** fpMul's CIOS loop, inlined into fpMul and fpSqr. */
// @ts-ignore: decorator
@inline function fpMulBody(out: usize, a: usize, b: usize): void {
  const b0 = ld(b, 0), b1 = ld(b, 1), b2 = ld(b, 2), b3 = ld(b, 3), b4 = ld(b, 4);
  const b5 = ld(b, 5), b6 = ld(b, 6), b7 = ld(b, 7), b8 = ld(b, 8);
  let t0: u64 = 0, t1: u64 = 0, t2: u64 = 0, t3: u64 = 0, t4: u64 = 0;
  let t5: u64 = 0, t6: u64 = 0, t7: u64 = 0;
  for (let i: usize = 0; i < <usize>LIMBS; i++) {
    const ai = ld(a, i);
    const x = t0 + ai * b0;
    const m = (((x as u32) * MU) & MASK32) as u64; // m = x·µ mod 2^29, so x + m·p ≡ 0 (mod 2^29)
    const c = (x + m * P0) >> LIMB_BITS;
    t0 = t1 + ai * b1 + m * P1 + c;
    t1 = t2 + ai * b2 + m * P2;
    t2 = t3 + ai * b3 + m * P3;
    t3 = t4 + ai * b4 + m * P4;
    t4 = t5 + ai * b5 + m * P5;
    t5 = t6 + ai * b6 + m * P6;
    t6 = t7 + ai * b7 + m * P7;
    t7 = ai * b8 + m * P8;
  }
  // Carry the deferred columns into 29-bit limbs.
  t1 += t0 >> LIMB_BITS;
  t2 += t1 >> LIMB_BITS;
  t3 += t2 >> LIMB_BITS;
  t4 += t3 >> LIMB_BITS;
  t5 += t4 >> LIMB_BITS;
  t6 += t5 >> LIMB_BITS;
  t7 += t6 >> LIMB_BITS;
  fpStoreReduced(
    out,
    t0 & MASK, t1 & MASK, t2 & MASK, t3 & MASK, t4 & MASK, t5 & MASK, t6 & MASK, t7 & MASK,
    t7 >> LIMB_BITS,
  );
}

/** out = a + b mod p. */
export function fpAdd(out: usize, a: usize, b: usize): void {
  let c: u64 = 0;
  const s0 = ld(a, 0) + ld(b, 0); c = s0 >> LIMB_BITS;
  const s1 = ld(a, 1) + ld(b, 1) + c; c = s1 >> LIMB_BITS;
  const s2 = ld(a, 2) + ld(b, 2) + c; c = s2 >> LIMB_BITS;
  const s3 = ld(a, 3) + ld(b, 3) + c; c = s3 >> LIMB_BITS;
  const s4 = ld(a, 4) + ld(b, 4) + c; c = s4 >> LIMB_BITS;
  const s5 = ld(a, 5) + ld(b, 5) + c; c = s5 >> LIMB_BITS;
  const s6 = ld(a, 6) + ld(b, 6) + c; c = s6 >> LIMB_BITS;
  const s7 = ld(a, 7) + ld(b, 7) + c; c = s7 >> LIMB_BITS;
  const s8 = ld(a, 8) + ld(b, 8) + c;
  fpStoreReduced(out, s0 & MASK, s1 & MASK, s2 & MASK, s3 & MASK, s4 & MASK, s5 & MASK, s6 & MASK, s7 & MASK, s8);
}

/**
 * out = a + b without the final subtraction (lazy reduction, Aranha et al.
 * 2011 §3): the result is < 2p when a, b < p (< 4p, 8p when nested once or
 * twice). Such a value may ONLY be used as an operand of fpMul (directly or
 * through another lazy add): fpMul accepts operands < 8p because
 * 64p² < p·R/2 with R = 2^261, so its output is still < 2p before its own
 * final subtraction.
 */
export function fpAddLazy(out: usize, a: usize, b: usize): void {
  // Unrolled: it runs 48 times per Fp12 multiplication.
  const s0 = ld(a, 0) + ld(b, 0);
  const s1 = ld(a, 1) + ld(b, 1) + (s0 >> LIMB_BITS);
  const s2 = ld(a, 2) + ld(b, 2) + (s1 >> LIMB_BITS);
  const s3 = ld(a, 3) + ld(b, 3) + (s2 >> LIMB_BITS);
  const s4 = ld(a, 4) + ld(b, 4) + (s3 >> LIMB_BITS);
  const s5 = ld(a, 5) + ld(b, 5) + (s4 >> LIMB_BITS);
  const s6 = ld(a, 6) + ld(b, 6) + (s5 >> LIMB_BITS);
  const s7 = ld(a, 7) + ld(b, 7) + (s6 >> LIMB_BITS);
  const s8 = ld(a, 8) + ld(b, 8) + (s7 >> LIMB_BITS);
  st(out, 0, s0 & MASK); st(out, 1, s1 & MASK); st(out, 2, s2 & MASK); st(out, 3, s3 & MASK);
  st(out, 4, s4 & MASK); st(out, 5, s5 & MASK); st(out, 6, s6 & MASK); st(out, 7, s7 & MASK);
  st(out, 8, s8);
}

/** out = 2a mod p. */
// @ts-ignore: decorator
@inline export function fpDouble(out: usize, a: usize): void {
  fpAdd(out, a, a);
}

/** out = a − b mod p. */
export function fpSub(out: usize, a: usize, b: usize): void {
  let d: i64 = 0;
  d = (ld(a, 0) as i64) - (ld(b, 0) as i64); const d0 = d & (MASK as i64); d >>= 29;
  d += (ld(a, 1) as i64) - (ld(b, 1) as i64); const d1 = d & (MASK as i64); d >>= 29;
  d += (ld(a, 2) as i64) - (ld(b, 2) as i64); const d2 = d & (MASK as i64); d >>= 29;
  d += (ld(a, 3) as i64) - (ld(b, 3) as i64); const d3 = d & (MASK as i64); d >>= 29;
  d += (ld(a, 4) as i64) - (ld(b, 4) as i64); const d4 = d & (MASK as i64); d >>= 29;
  d += (ld(a, 5) as i64) - (ld(b, 5) as i64); const d5 = d & (MASK as i64); d >>= 29;
  d += (ld(a, 6) as i64) - (ld(b, 6) as i64); const d6 = d & (MASK as i64); d >>= 29;
  d += (ld(a, 7) as i64) - (ld(b, 7) as i64); const d7 = d & (MASK as i64); d >>= 29;
  d += (ld(a, 8) as i64) - (ld(b, 8) as i64);
  if (d >= 0) {
    st(out, 0, d0 as u64); st(out, 1, d1 as u64); st(out, 2, d2 as u64); st(out, 3, d3 as u64);
    st(out, 4, d4 as u64); st(out, 5, d5 as u64); st(out, 6, d6 as u64); st(out, 7, d7 as u64);
    st(out, 8, d as u64);
    return;
  }
  // a < b: add p back (the borrow out of limb 8 cancels against the carry).
  let c: i64 = d0 + (P0 as i64); st(out, 0, (c & (MASK as i64)) as u64); c >>= 29;
  c += d1 + (P1 as i64); st(out, 1, (c & (MASK as i64)) as u64); c >>= 29;
  c += d2 + (P2 as i64); st(out, 2, (c & (MASK as i64)) as u64); c >>= 29;
  c += d3 + (P3 as i64); st(out, 3, (c & (MASK as i64)) as u64); c >>= 29;
  c += d4 + (P4 as i64); st(out, 4, (c & (MASK as i64)) as u64); c >>= 29;
  c += d5 + (P5 as i64); st(out, 5, (c & (MASK as i64)) as u64); c >>= 29;
  c += d6 + (P6 as i64); st(out, 6, (c & (MASK as i64)) as u64); c >>= 29;
  c += d7 + (P7 as i64); st(out, 7, (c & (MASK as i64)) as u64); c >>= 29;
  c += d + (P8 as i64); st(out, 8, (c & (MASK as i64)) as u64);
}

/** out = −a mod p. */
export function fpNeg(out: usize, a: usize): void {
  fpSub(out, FP_ZERO, a);
}

/** The zero element (all limbs 0). */
export const FP_ZERO: usize = memory.data(<i32>FP_SIZE, 4);

export function fpCopy(out: usize, a: usize): void {
  memory.copy(out, a, FP_SIZE);
}
export function fpSetZero(out: usize): void {
  memory.fill(out, 0, FP_SIZE);
}
export function fpSetOne(out: usize): void {
  memory.copy(out, FP_ONE, FP_SIZE);
}
export function fpIsZero(a: usize): bool {
  let acc: u32 = 0;
  for (let i: usize = 0; i < <usize>LIMBS; i++) acc |= load<u32>(a + i * LIMB_BYTES);
  return acc == 0;
}
export function fpEq(a: usize, b: usize): bool {
  return memory.compare(a, b, FP_SIZE) == 0;
}
export function fpIsOne(a: usize): bool {
  return fpEq(a, FP_ONE);
}

const INV_BASE: usize = memory.data(<i32>FP_SIZE, 4);
const INV_ACC: usize = memory.data(<i32>FP_SIZE, 4);

/** out = a⁻¹ = a^(p−2) (Fermat); out = 0 when a = 0. Left-to-right square and multiply. */
export function fpInv(out: usize, a: usize): void {
  fpCopy(INV_BASE, a);
  fpSetOne(INV_ACC);
  for (let w: i32 = 3; w >= 0; w--) {
    const word = w == 3 ? P_MINUS_2_W3 : w == 2 ? P_MINUS_2_W2 : w == 1 ? P_MINUS_2_W1 : P_MINUS_2_W0;
    for (let bit: i32 = 63; bit >= 0; bit--) {
      fpSqr(INV_ACC, INV_ACC);
      if ((word >> (bit as u64)) & 1) fpMul(INV_ACC, INV_ACC, INV_BASE);
    }
  }
  fpCopy(out, INV_ACC);
}

// --- canonical big-endian encoding -------------------------------------------

/** Scratch: a 256-bit integer as four little-endian u64 words. */
const WORD_BYTES: usize = 8;
const WORD_COUNT: usize = 4;
const WORDS: usize = memory.data(<i32>(WORD_COUNT * WORD_BYTES), <i32>WORD_BYTES);

// @ts-ignore: decorator
@inline function word(i: usize): u64 {
  return load<u64>(WORDS + i * WORD_BYTES);
}

/** Reads 32 big-endian bytes into WORDS (word 0 least significant). */
export function readWordsBE(src: usize): void {
  for (let i: usize = 0; i < 4; i++) {
    store<u64>(WORDS + (3 - i) * WORD_BYTES, bswap<u64>(load<u64>(src + i * WORD_BYTES)));
  }
}

/** True when the 256-bit integer in WORDS is < m (given as little-endian words). */
export function wordsLessThan(m0: u64, m1: u64, m2: u64, m3: u64): bool {
  if (word(3) != m3) return word(3) < m3;
  if (word(2) != m2) return word(2) < m2;
  if (word(1) != m1) return word(1) < m1;
  return word(0) < m0;
}

/** True when the 256-bit integer in WORDS is zero. */
export function wordsIsZero(): bool {
  return (word(0) | word(1) | word(2) | word(3)) == 0;
}

/**
 * Decodes a 32-byte big-endian integer into Montgomery form. Returns false,
 * leaving out unspecified, when the integer is not canonical (≥ p): the
 * verifier rejects x + p aliases that other implementations reduce silently.
 */
export function fpFromBytes(out: usize, src: usize): bool {
  readWordsBE(src);
  if (!wordsLessThan(P_W0, P_W1, P_W2, P_W3)) return false;
  for (let i: usize = 0; i < <usize>LIMBS; i++) {
    const bit = i * <usize>LIMB_BITS;
    const wi = bit >> 6;
    const sh = (bit & 63) as u64;
    let v = word(wi) >> sh;
    if (sh > 64 - LIMB_BITS && wi < 3) v |= word(wi + 1) << (64 - sh);
    st(out, i, v & MASK);
  }
  fpMul(out, out, FP_R2); // x·R²·R⁻¹ = x·R
  return true;
}

const TO_BYTES: usize = memory.data(<i32>FP_SIZE, 4);

/** Writes a as a 32-byte big-endian canonical integer. */
export function fpToBytes(dst: usize, a: usize): void {
  fpMul(TO_BYTES, a, FP_RAW_ONE); // a·R·R⁻¹ = a
  memory.fill(WORDS, 0, 32);
  for (let i: usize = 0; i < <usize>LIMBS; i++) {
    const limb = ld(TO_BYTES, i);
    const bit = i * <usize>LIMB_BITS;
    const wi = bit >> 6;
    const sh = (bit & 63) as u64;
    store<u64>(WORDS + wi * WORD_BYTES, word(wi) | (limb << sh));
    if (sh > 64 - LIMB_BITS && wi < 3) store<u64>(WORDS + (wi + 1) * WORD_BYTES, word(wi + 1) | (limb >> (64 - sh)));
  }
  for (let i: usize = 0; i < 4; i++) store<u64>(dst + i * WORD_BYTES, bswap<u64>(word(3 - i)));
}
