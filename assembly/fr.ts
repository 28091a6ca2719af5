// Fr — the BN254 scalar field, r = 21888242871839275222246405745257275088548364400416034343698204186575808495617,
// for the prover (witness arithmetic, the quotient's NTT). The verifier never
// needs it: its scalars are only ever bits.
//
// The representation is fp.ts's with r in place of p: Montgomery form x·R mod
// r, R = 2^261, nine little-endian 29-bit limbs (FR_SIZE = 36 bytes), always
// fully reduced. frMul is fp.ts's CIOS multiplication (Koç, Acar, Kaliski
// 1996) over r's limbs; see fp.ts for why the 29-bit columns never carry.
// Operations are output-first and allow out to alias an input.
//
// Byte forms: snarkjs and circom write Fr elements as 32-byte LITTLE-endian
// integers (the witness in standard form, zkey coefficients as c·2^512 mod
// r, see constants.ts ZKEY_COEF_TO_MONT); this file reads and writes those.

import {
  FR_P0, FR_P1, FR_P2, FR_P3, FR_P4, FR_P5, FR_P6, FR_P7, FR_P8, FR_MU,
  R_W0, R_W1, R_W2, R_W3,
  FR_ONE, FR_R2, FP_RAW_ONE,
} from "./constants";
// The limb layout is fp.ts's: its limb access and masks serve both fields.
import { LIMB_BITS, MASK, MASK32, ld, st } from "./fp";

export const FR_SIZE: usize = 36;
/** A 256-bit integer as four little-endian u64 words (the scalar form the MSM digits are cut from). */
export const WORDS_SIZE: usize = 32;
export const WORD_BYTES: usize = 8;
const LIMBS: usize = 9;

/** Stores the normalised limbs r0..r8 (value < 2r) reduced into [0, r). Exported for poseidon.ts's two-lane product. */
// @ts-ignore: decorator
@inline export function frStoreReduced(
  out: usize,
  r0: u64, r1: u64, r2: u64, r3: u64, r4: u64, r5: u64, r6: u64, r7: u64, r8: u64,
): void {
  const M = MASK as i64;
  let d: i64 = (r0 as i64) - (FR_P0 as i64);
  const s0 = d & M; d >>= 29;
  d += (r1 as i64) - (FR_P1 as i64); const s1 = d & M; d >>= 29;
  d += (r2 as i64) - (FR_P2 as i64); const s2 = d & M; d >>= 29;
  d += (r3 as i64) - (FR_P3 as i64); const s3 = d & M; d >>= 29;
  d += (r4 as i64) - (FR_P4 as i64); const s4 = d & M; d >>= 29;
  d += (r5 as i64) - (FR_P5 as i64); const s5 = d & M; d >>= 29;
  d += (r6 as i64) - (FR_P6 as i64); const s6 = d & M; d >>= 29;
  d += (r7 as i64) - (FR_P7 as i64); const s7 = d & M; d >>= 29;
  d += (r8 as i64) - (FR_P8 as i64);
  if (d < 0) {
    st(out, 0, r0); st(out, 1, r1); st(out, 2, r2); st(out, 3, r3); st(out, 4, r4);
    st(out, 5, r5); st(out, 6, r6); st(out, 7, r7); st(out, 8, r8);
  } else {
    st(out, 0, s0 as u64); st(out, 1, s1 as u64); st(out, 2, s2 as u64); st(out, 3, s3 as u64);
    st(out, 4, s4 as u64); st(out, 5, s5 as u64); st(out, 6, s6 as u64); st(out, 7, s7 as u64);
    st(out, 8, d as u64);
  }
}

/** out = a·b·R⁻¹ mod r (CIOS with deferred carries, as fpMul). Inputs < 2r allowed. */
export function frMul(out: usize, a: usize, b: usize): void {
  frMulBody(out, a, b);
}

/** out = a² (Montgomery): frMul's body as a function of its own, which the wide build replaces with a dedicated squaring (as fp.ts's fpSqr). */
export function frSqr(out: usize, a: usize): void {
  frMulBody(out, a, a);
}

/** frMul's CIOS loop, inlined into frMul and frSqr. */
// @ts-ignore: decorator
@inline function frMulBody(out: usize, a: usize, b: usize): void {
  const b0 = ld(b, 0), b1 = ld(b, 1), b2 = ld(b, 2), b3 = ld(b, 3), b4 = ld(b, 4);
  const b5 = ld(b, 5), b6 = ld(b, 6), b7 = ld(b, 7), b8 = ld(b, 8);
  let t0: u64 = 0, t1: u64 = 0, t2: u64 = 0, t3: u64 = 0, t4: u64 = 0;
  let t5: u64 = 0, t6: u64 = 0, t7: u64 = 0;
  for (let i: usize = 0; i < LIMBS; i++) {
    const ai = ld(a, i);
    const x = t0 + ai * b0;
    const m = (((x as u32) * FR_MU) & MASK32) as u64; // x + m·r ≡ 0 (mod 2^29)
    const c = (x + m * FR_P0) >> LIMB_BITS;
    t0 = t1 + ai * b1 + m * FR_P1 + c;
    t1 = t2 + ai * b2 + m * FR_P2;
    t2 = t3 + ai * b3 + m * FR_P3;
    t3 = t4 + ai * b4 + m * FR_P4;
    t4 = t5 + ai * b5 + m * FR_P5;
    t5 = t6 + ai * b6 + m * FR_P6;
    t6 = t7 + ai * b7 + m * FR_P7;
    t7 = ai * b8 + m * FR_P8;
  }
  t1 += t0 >> LIMB_BITS;
  t2 += t1 >> LIMB_BITS;
  t3 += t2 >> LIMB_BITS;
  t4 += t3 >> LIMB_BITS;
  t5 += t4 >> LIMB_BITS;
  t6 += t5 >> LIMB_BITS;
  t7 += t6 >> LIMB_BITS;
  frStoreReduced(
    out,
    t0 & MASK, t1 & MASK, t2 & MASK, t3 & MASK, t4 & MASK, t5 & MASK, t6 & MASK, t7 & MASK,
    t7 >> LIMB_BITS,
  );
}

/** out = a + b mod r. */
export function frAdd(out: usize, a: usize, b: usize): void {
  const s0 = ld(a, 0) + ld(b, 0);
  const s1 = ld(a, 1) + ld(b, 1) + (s0 >> LIMB_BITS);
  const s2 = ld(a, 2) + ld(b, 2) + (s1 >> LIMB_BITS);
  const s3 = ld(a, 3) + ld(b, 3) + (s2 >> LIMB_BITS);
  const s4 = ld(a, 4) + ld(b, 4) + (s3 >> LIMB_BITS);
  const s5 = ld(a, 5) + ld(b, 5) + (s4 >> LIMB_BITS);
  const s6 = ld(a, 6) + ld(b, 6) + (s5 >> LIMB_BITS);
  const s7 = ld(a, 7) + ld(b, 7) + (s6 >> LIMB_BITS);
  const s8 = ld(a, 8) + ld(b, 8) + (s7 >> LIMB_BITS);
  frStoreReduced(out, s0 & MASK, s1 & MASK, s2 & MASK, s3 & MASK, s4 & MASK, s5 & MASK, s6 & MASK, s7 & MASK, s8);
}

/** out = a − b mod r. */
export function frSub(out: usize, a: usize, b: usize): void {
  const M = MASK as i64;
  let d: i64 = (ld(a, 0) as i64) - (ld(b, 0) as i64); const d0 = d & M; d >>= 29;
  d += (ld(a, 1) as i64) - (ld(b, 1) as i64); const d1 = d & M; d >>= 29;
  d += (ld(a, 2) as i64) - (ld(b, 2) as i64); const d2 = d & M; d >>= 29;
  d += (ld(a, 3) as i64) - (ld(b, 3) as i64); const d3 = d & M; d >>= 29;
  d += (ld(a, 4) as i64) - (ld(b, 4) as i64); const d4 = d & M; d >>= 29;
  d += (ld(a, 5) as i64) - (ld(b, 5) as i64); const d5 = d & M; d >>= 29;
  d += (ld(a, 6) as i64) - (ld(b, 6) as i64); const d6 = d & M; d >>= 29;
  d += (ld(a, 7) as i64) - (ld(b, 7) as i64); const d7 = d & M; d >>= 29;
  d += (ld(a, 8) as i64) - (ld(b, 8) as i64);
  if (d >= 0) {
    st(out, 0, d0 as u64); st(out, 1, d1 as u64); st(out, 2, d2 as u64); st(out, 3, d3 as u64);
    st(out, 4, d4 as u64); st(out, 5, d5 as u64); st(out, 6, d6 as u64); st(out, 7, d7 as u64);
    st(out, 8, d as u64);
    return;
  }
  // a < b: add r back (the borrow out of limb 8 cancels against the carry).
  let c: i64 = d0 + (FR_P0 as i64); st(out, 0, (c & M) as u64); c >>= 29;
  c += d1 + (FR_P1 as i64); st(out, 1, (c & M) as u64); c >>= 29;
  c += d2 + (FR_P2 as i64); st(out, 2, (c & M) as u64); c >>= 29;
  c += d3 + (FR_P3 as i64); st(out, 3, (c & M) as u64); c >>= 29;
  c += d4 + (FR_P4 as i64); st(out, 4, (c & M) as u64); c >>= 29;
  c += d5 + (FR_P5 as i64); st(out, 5, (c & M) as u64); c >>= 29;
  c += d6 + (FR_P6 as i64); st(out, 6, (c & M) as u64); c >>= 29;
  c += d7 + (FR_P7 as i64); st(out, 7, (c & M) as u64); c >>= 29;
  c += d + (FR_P8 as i64); st(out, 8, (c & M) as u64);
}

export function frCopy(out: usize, a: usize): void {
  memory.copy(out, a, FR_SIZE);
}
export function frSetOne(out: usize): void {
  memory.copy(out, FR_ONE, FR_SIZE);
}

// --- byte and word forms ----------------------------------------------------------

/** True when the 32-byte little-endian integer at src is < r. */
export function leIsCanonical(src: usize): bool {
  const w3 = load<u64>(src + 3 * WORD_BYTES), w2 = load<u64>(src + 2 * WORD_BYTES), w1 = load<u64>(src + WORD_BYTES), w0 = load<u64>(src);
  if (w3 != R_W3) return w3 < R_W3;
  if (w2 != R_W2) return w2 < R_W2;
  if (w1 != R_W1) return w1 < R_W1;
  return w0 < R_W0;
}

/** Splits the 256-bit little-endian integer at src (words) into nine 29-bit limbs at out (no reduction). */
export function limbsFromWords(out: usize, src: usize): void {
  for (let i: usize = 0; i < LIMBS; i++) {
    const bit = i * <usize>LIMB_BITS;
    const wi = bit >> 6;
    const sh = (bit & 63) as u64;
    let v = load<u64>(src + wi * WORD_BYTES) >> sh;
    if (sh > 64 - LIMB_BITS && wi < 3) v |= load<u64>(src + (wi + 1) * WORD_BYTES) << (64 - sh);
    st(out, i, v & MASK);
  }
}

/** Joins nine 29-bit limbs at a into four little-endian u64 words at out (the integer's own bytes, little-endian). */
export function wordsFromLimbs(out: usize, a: usize): void {
  memory.fill(out, 0, WORDS_SIZE);
  for (let i: usize = 0; i < LIMBS; i++) {
    const limb = ld(a, i);
    const bit = i * <usize>LIMB_BITS;
    const wi = bit >> 6;
    const sh = (bit & 63) as u64;
    store<u64>(out + wi * WORD_BYTES, load<u64>(out + wi * WORD_BYTES) | (limb << sh));
    if (sh > 64 - LIMB_BITS && wi < 3) {
      store<u64>(out + (wi + 1) * WORD_BYTES, load<u64>(out + (wi + 1) * WORD_BYTES) | (limb >> (64 - sh)));
    }
  }
}

/** out = the Montgomery form of the canonical little-endian integer at src (check leIsCanonical first). */
export function frFromLE(out: usize, src: usize): void {
  limbsFromWords(out, src);
  frMul(out, out, FR_R2); // x·R²·R⁻¹ = x·R
}

const PLAIN: usize = memory.data(<i32>FR_SIZE, 4);

/** Writes a (Montgomery) as its canonical integer, 32 bytes little-endian (= four u64 words). */
export function frToLE(dst: usize, a: usize): void {
  frMul(PLAIN, a, FP_RAW_ONE); // a·R·R⁻¹ = a
  wordsFromLimbs(dst, PLAIN);
}
