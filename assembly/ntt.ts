// Number-theoretic transforms over Fr on power-of-two domains, for the
// prover's quotient (prover.ts). Iterative radix-2 Cooley–Tukey (Cormen et
// al., "Introduction to Algorithms", 3rd ed., §30.3, ITERATIVE-FFT): a
// bit-reversal permutation, then log n stages of butterflies
// (u, v) → (u + ωv, u − ωv), with the twiddles read from one table of the
// powers of the domain's root, ω^0..ω^(n/2 − 1), built once per domain.
//
// The roots are ffjavascript's (constants.ts FR_ROOTS) so that output i is
// the evaluation at ω^i exactly as snarkjs's Fr.fft orders it; the inverse
// transform uses ω⁻¹ and scales by n⁻¹.

import { FR_ROOTS, FR_ROOTS_INV, FR_INV_POW2, FR_TWO_ADICITY } from "./constants";
import { FR_SIZE, frMul, frAdd, frSub, frSetOne, frCopy } from "./fr";

let domainLog: i32 = -1;
let domainSize: usize = 0;
/** ω^k and ω^(−k), k < n/2, Montgomery form. */
let twiddles: usize = 0;
let twiddlesInv: usize = 0;
/** n⁻¹·g^i, i < n (g the coset generator ffjavascript uses, w[log n + 1]): toCoset's one multiplication per element. */
let cosetFactors: usize = 0;

const V: usize = memory.data(<i32>FR_SIZE, 4);

/** Prepares the twiddle tables of the 2^log domain (log ≤ FR_TWO_ADICITY; the caller checks). */
export function nttSetDomain(log: i32): void {
  if (log == domainLog) return;
  domainLog = log;
  domainSize = (<usize>1) << <usize>log;
  const half = max<usize>(domainSize >> 1, 1);
  twiddles = heap.alloc(half * FR_SIZE);
  twiddlesInv = heap.alloc(half * FR_SIZE);
  frSetOne(twiddles);
  frSetOne(twiddlesInv);
  const w = FR_ROOTS + <usize>log * FR_SIZE;
  const wi = FR_ROOTS_INV + <usize>log * FR_SIZE;
  for (let k: usize = 1; k < half; k++) {
    frMul(twiddles + k * FR_SIZE, twiddles + (k - 1) * FR_SIZE, w);
    frMul(twiddlesInv + k * FR_SIZE, twiddlesInv + (k - 1) * FR_SIZE, wi);
  }
  // The coset factors exist when the domain has a 2n-th root (log < FR_TWO_ADICITY; setup checks it for the prover).
  if (log < FR_TWO_ADICITY) {
    cosetFactors = heap.alloc(domainSize * FR_SIZE);
    frCopy(cosetFactors, FR_INV_POW2 + <usize>log * FR_SIZE);
    const g = FR_ROOTS + (<usize>log + 1) * FR_SIZE;
    for (let i: usize = 1; i < domainSize; i++) frMul(cosetFactors + i * FR_SIZE, cosetFactors + (i - 1) * FR_SIZE, g);
  }
}

/** The bit-reversal permutation, with j kept as i's reversal by a reversed increment. */
function bitReverse(a: usize): void {
  let j: usize = 0;
  for (let i: usize = 1; i < domainSize; i++) {
    let bit = domainSize >> 1;
    while (j & bit) {
      j ^= bit;
      bit >>= 1;
    }
    j ^= bit;
    if (i < j) {
      frCopy(V, a + i * FR_SIZE);
      frCopy(a + i * FR_SIZE, a + j * FR_SIZE);
      frCopy(a + j * FR_SIZE, V);
    }
  }
}

function transform(a: usize, table: usize): void {
  bitReverse(a);
  for (let len: usize = 2; len <= domainSize; len <<= 1) {
    const half = len >> 1;
    const stride = domainSize / len; // ω_len = ω_n^(n/len)
    for (let start: usize = 0; start < domainSize; start += len) {
      for (let j: usize = 0; j < half; j++) {
        const u = a + (start + j) * FR_SIZE;
        const v = a + (start + j + half) * FR_SIZE;
        frMul(V, v, table + j * stride * FR_SIZE);
        frSub(v, u, V);
        frAdd(u, u, V);
      }
    }
  }
}

/** In place: coefficients → evaluations at ω^0..ω^(n−1) (n = the domain set by nttSetDomain). */
export function ntt(a: usize): void {
  transform(a, twiddles);
}

/** In place: evaluations at ω^0..ω^(n−1) → coefficients. */
export function intt(a: usize): void {
  transform(a, twiddlesInv);
  const scale = FR_INV_POW2 + <usize>domainLog * FR_SIZE;
  for (let i: usize = 0; i < domainSize; i++) frMul(a + i * FR_SIZE, a + i * FR_SIZE, scale);
}

/**
 * In place: evaluations on ⟨ω⟩ → evaluations on the coset g·⟨ω⟩ with
 * g = w[log n + 1], exactly intt, cosetShift(g), ntt — but the inverse
 * transform's n⁻¹ and the shift's g^i are one precomputed factor per element
 * (n⁻¹·g^i, shared by the prover's three transforms): n multiplications
 * instead of 3n between the two transforms (the scaling of an inverse DFT
 * folded into the following diagonal matrix, e.g. Van Loan, "Computational
 * Frameworks for the Fast Fourier Transform", 1992, §1.4 and §4.1).
 */
export function toCoset(a: usize): void {
  transform(a, twiddlesInv);
  for (let i: usize = 0; i < domainSize; i++) frMul(a + i * FR_SIZE, a + i * FR_SIZE, cosetFactors + i * FR_SIZE);
  transform(a, twiddles);
}
