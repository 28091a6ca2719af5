// Poseidon over two inputs — the hash of Semaphore v4's group trees (LeanIMT)
// — on fr.ts's Montgomery field, exported by build/prover.wasm so the service
// and the agent hash group trees here rather than in BigInt JavaScript
// (src/groups/poseidon.ts).
//
// The permutation is circomlib's (t = 3: capacity 0, then the two inputs;
// 8 full rounds, 57 partial rounds, S-box x^5; the hash is the state's first
// element) in the form with sparse partial rounds that circomlibjs's
// poseidon_opt.js uses: the same function with 8 field multiplications per
// partial round instead of 12 (3 for the S-box, 9 for the dense MDS). The
// constants are generated (scripts/asc-poseidon.ts, which checks them against
// the plain form and poseidon-lite).
//
// ABI, through the I/O buffer (io.ts); 32-byte little-endian integers:
//   poseidonHash()       io: a ‖ b  →  io: H(a, b)
//   poseidonLevel(n)     io: n nodes of one tree level  →  io: its ⌈n/2⌉ parents:
//                        parent i = H(node 2i, node 2i+1); an odd last node is
//                        carried up unhashed (LeanIMT's rule for a lone right-most node)
// Both refuse an input ≥ r (POSEIDON_NOT_CANONICAL, nothing meaningful written):
// the caller reduces first. Nothing allocates; the state is static.

import { FR_SIZE, frMul, frSqr, frAdd, frStoreReduced, leIsCanonical, frFromLE, frToLE } from "./fr";
import { FR_P0, FR_P1, FR_P2, FR_P3, FR_P4, FR_P5, FR_P6, FR_P7, FR_P8, FR_MU } from "./constants";
import { LIMB_BYTES, MASK32 } from "./fp";
import { ioBase } from "./io";
import { POSEIDON_C, POSEIDON_M, POSEIDON_P, POSEIDON_S, POSEIDON_ROUNDS_F, POSEIDON_ROUNDS_P } from "./poseidon-constants";

export const POSEIDON_OK: i32 = 0;
export const POSEIDON_NOT_CANONICAL: i32 = -1;
const NODE_BYTES: usize = 32;

const STATE: usize = memory.data(<i32>(3 * FR_SIZE), 8);
const NEXT: usize = memory.data(<i32>(3 * FR_SIZE), 8);
const SQ: usize = memory.data(<i32>FR_SIZE, 8);
const PROD: usize = memory.data(<i32>FR_SIZE, 8);

// @ts-ignore: decorator
@inline function el(base: usize, i: i32): usize {
  return base + <usize>i * FR_SIZE;
}

/**
 * x ← x^5 (two squarings and a product). A function of its own: the wide
 * build replaces it (assembly/wide.wat) with one that keeps x in 64-bit words
 * from the first squaring to the last product.
 */
function pow5(x: usize): void {
  frSqr(SQ, x);
  frSqr(PROD, SQ); // not in place: a product whose out were always SQ would lose that parameter to binaryen, and the wide build's frSqr (same signature) could not replace it
  frMul(x, x, PROD);
}

const DOT: usize = memory.data(<i32>FR_SIZE, 8);

/**
 * out = a0·b0 + a1·b1 + a2·b2 mod r, the a_i and b_i three consecutive
 * elements from a and b (a row of the matrix times the state). The wide build
 * replaces it with one Montgomery reduction of the sum of the three products
 * (assembly/wide.wat); here it is three products and two additions.
 */
function dot3(out: usize, a: usize, b: usize): void {
  frMul(DOT, a, b);
  frMul(PROD, el(a, 1), el(b, 1));
  frAdd(DOT, DOT, PROD);
  frMul(PROD, el(a, 2), el(b, 2));
  frAdd(out, DOT, PROD);
}

/** state ← A·state, A a 3×3 matrix stored row by row. */
function mix(a: usize): void {
  // STATE first here and second in the partial rounds: a parameter that every
  // call passed the same constant would be removed by binaryen, and the wide
  // build's dot3 (same signature) could not replace this one.
  for (let i = 0; i < 3; i++) dot3(el(NEXT, i), STATE, el(a, 3 * i));
  memory.copy(STATE, NEXT, 3 * FR_SIZE);
}

/** A full round's S-boxes, then its constants from C[k…k+3). */
function fullSboxAdd(k: i32): void {
  for (let i = 0; i < 3; i++) {
    pow5(el(STATE, i));
    frAdd(el(STATE, i), el(STATE, i), el(POSEIDON_C, k + i));
  }
}

/** The permutation on STATE (Montgomery form), circomlibjs's poseidon_opt.js schedule. */
function permute(): void {
  const half = POSEIDON_ROUNDS_F / 2;
  for (let i = 0; i < 3; i++) frAdd(el(STATE, i), el(STATE, i), el(POSEIDON_C, i));
  for (let r = 0; r < half - 1; r++) {
    fullSboxAdd((r + 1) * 3);
    mix(POSEIDON_M);
  }
  fullSboxAdd(half * 3);
  mix(POSEIDON_P);
  const s0 = STATE, s1 = el(STATE, 1), s2 = el(STATE, 2);
  const n0 = NEXT;
  let c = el(POSEIDON_C, (half + 1) * 3);
  let w = POSEIDON_S;
  for (let r = 0; r < POSEIDON_ROUNDS_P; r++) {
    pow5(s0);
    frAdd(s0, s0, c);
    // new s0 = w0·s0 + w1·s1 + w2·s2; s1 += s0·w3; s2 += s0·w4 (with the old s0)
    dot3(n0, w, s0);
    frMul(PROD, s0, el(w, 3));
    frAdd(s1, s1, PROD);
    frMul(PROD, s0, el(w, 4));
    frAdd(s2, s2, PROD);
    memory.copy(s0, n0, FR_SIZE);
    c += FR_SIZE;
    w += 5 * FR_SIZE;
  }
  for (let r = 0; r < half - 1; r++) {
    fullSboxAdd((half + 1) * 3 + POSEIDON_ROUNDS_P + r * 3);
    mix(POSEIDON_M);
  }
  for (let i = 0; i < 3; i++) pow5(el(STATE, i));
  mix(POSEIDON_M);
}

// --- two hashes at once (poseidonLevel) ------------------------------------------
//
// The same permutation on two independent states, A and B, whose field
// products run in the two 64-bit lanes of a SIMD register: frMul2 is frMul's
// CIOS step for step, each u64 operation replaced by its i64x2 twin, and
// i64x2.extmul_low_i32x4_u (one pmuludq on x86) forming both lanes' 29×29-bit
// limb products at once. The carry normalisation and the final reduction are
// frMul's own (frStoreReduced), per lane.

const STATE_B: usize = memory.data(<i32>(3 * FR_SIZE), 8);
const NEXT_B: usize = memory.data(<i32>(3 * FR_SIZE), 8);
const SQ_B: usize = memory.data(<i32>FR_SIZE, 8);
const PROD_B: usize = memory.data(<i32>FR_SIZE, 8);

/** r's limbs, each splat over a v128: read from memory inside frMul2's loop rather than held in registers (x86 has 16). */
const R_SPLAT: usize = memory.data<u32>([
  <u32>FR_P0, <u32>FR_P0, <u32>FR_P0, <u32>FR_P0, <u32>FR_P1, <u32>FR_P1, <u32>FR_P1, <u32>FR_P1,
  <u32>FR_P2, <u32>FR_P2, <u32>FR_P2, <u32>FR_P2, <u32>FR_P3, <u32>FR_P3, <u32>FR_P3, <u32>FR_P3,
  <u32>FR_P4, <u32>FR_P4, <u32>FR_P4, <u32>FR_P4, <u32>FR_P5, <u32>FR_P5, <u32>FR_P5, <u32>FR_P5,
  <u32>FR_P6, <u32>FR_P6, <u32>FR_P6, <u32>FR_P6, <u32>FR_P7, <u32>FR_P7, <u32>FR_P7, <u32>FR_P7,
  <u32>FR_P8, <u32>FR_P8, <u32>FR_P8, <u32>FR_P8,
], 16);

// @ts-ignore: decorator
@inline function limbPair(a: usize, b: usize, i: usize): v128 {
  return i32x4.replace_lane(i32x4.splat(load<i32>(a + i * LIMB_BYTES)), 1, load<i32>(b + i * LIMB_BYTES));
}

// @ts-ignore: decorator
@inline function lo(v: v128): u64 {
  return i64x2.extract_lane(v, 0) as u64;
}
// @ts-ignore: decorator
@inline function hi(v: v128): u64 {
  return i64x2.extract_lane(v, 1) as u64;
}

/** outA = aA·bA·R⁻¹, outB = aB·bB·R⁻¹ (mod r), as frMul; inputs < 2r, outputs may alias inputs. */
function frMul2(outA: usize, aA: usize, bA: usize, outB: usize, aB: usize, bB: usize): void {
  const b0 = limbPair(bA, bB, 0), b1 = limbPair(bA, bB, 1), b2 = limbPair(bA, bB, 2);
  const b3 = limbPair(bA, bB, 3), b4 = limbPair(bA, bB, 4), b5 = limbPair(bA, bB, 5);
  const b6 = limbPair(bA, bB, 6), b7 = limbPair(bA, bB, 7), b8 = limbPair(bA, bB, 8);
  const mu = i32x4.splat(<i32>FR_MU);
  const mask = i32x4.splat(<i32>MASK32);
  let t0 = i64x2.splat(0), t1 = i64x2.splat(0), t2 = i64x2.splat(0), t3 = i64x2.splat(0);
  let t4 = i64x2.splat(0), t5 = i64x2.splat(0), t6 = i64x2.splat(0), t7 = i64x2.splat(0);
  for (let i: usize = 0; i < 9; i++) {
    const ai = limbPair(aA, aB, i);
    const x = i64x2.add(t0, i64x2.extmul_low_i32x4_u(ai, b0));
    // m = low32(x)·µ mod 2^29 per lane; the low words sit in i32 lanes 0 and 2.
    const xm = i32x4.mul(x, mu);
    const m = v128.and(v128.shuffle<i32>(xm, xm, 0, 2, 0, 2), mask);
    const c = i64x2.shr_u(i64x2.add(x, i64x2.extmul_low_i32x4_u(m, v128.load(R_SPLAT, 0))), 29);
    t0 = i64x2.add(i64x2.add(t1, i64x2.extmul_low_i32x4_u(ai, b1)), i64x2.add(i64x2.extmul_low_i32x4_u(m, v128.load(R_SPLAT, 16)), c));
    t1 = i64x2.add(t2, i64x2.add(i64x2.extmul_low_i32x4_u(ai, b2), i64x2.extmul_low_i32x4_u(m, v128.load(R_SPLAT, 32))));
    t2 = i64x2.add(t3, i64x2.add(i64x2.extmul_low_i32x4_u(ai, b3), i64x2.extmul_low_i32x4_u(m, v128.load(R_SPLAT, 48))));
    t3 = i64x2.add(t4, i64x2.add(i64x2.extmul_low_i32x4_u(ai, b4), i64x2.extmul_low_i32x4_u(m, v128.load(R_SPLAT, 64))));
    t4 = i64x2.add(t5, i64x2.add(i64x2.extmul_low_i32x4_u(ai, b5), i64x2.extmul_low_i32x4_u(m, v128.load(R_SPLAT, 80))));
    t5 = i64x2.add(t6, i64x2.add(i64x2.extmul_low_i32x4_u(ai, b6), i64x2.extmul_low_i32x4_u(m, v128.load(R_SPLAT, 96))));
    t6 = i64x2.add(t7, i64x2.add(i64x2.extmul_low_i32x4_u(ai, b7), i64x2.extmul_low_i32x4_u(m, v128.load(R_SPLAT, 112))));
    t7 = i64x2.add(i64x2.extmul_low_i32x4_u(ai, b8), i64x2.extmul_low_i32x4_u(m, v128.load(R_SPLAT, 128)));
  }
  t1 = i64x2.add(t1, i64x2.shr_u(t0, 29));
  t2 = i64x2.add(t2, i64x2.shr_u(t1, 29));
  t3 = i64x2.add(t3, i64x2.shr_u(t2, 29));
  t4 = i64x2.add(t4, i64x2.shr_u(t3, 29));
  t5 = i64x2.add(t5, i64x2.shr_u(t4, 29));
  t6 = i64x2.add(t6, i64x2.shr_u(t5, 29));
  t7 = i64x2.add(t7, i64x2.shr_u(t6, 29));
  const M = i64x2.splat(0x1fffffff);
  const top = i64x2.shr_u(t7, 29);
  t0 = v128.and(t0, M); t1 = v128.and(t1, M); t2 = v128.and(t2, M); t3 = v128.and(t3, M);
  t4 = v128.and(t4, M); t5 = v128.and(t5, M); t6 = v128.and(t6, M); t7 = v128.and(t7, M);
  frStoreReduced(outA, lo(t0), lo(t1), lo(t2), lo(t3), lo(t4), lo(t5), lo(t6), lo(t7), lo(top));
  frStoreReduced(outB, hi(t0), hi(t1), hi(t2), hi(t3), hi(t4), hi(t5), hi(t6), hi(t7), hi(top));
}

/** x ← x^5 in both lanes (x in lane A's buffers, y in lane B's). */
function pow5x2(x: usize, y: usize): void {
  frMul2(SQ, x, x, SQ_B, y, y);
  frMul2(SQ, SQ, SQ, SQ_B, SQ_B, SQ_B);
  frMul2(x, x, SQ, y, y, SQ_B);
}

/** Both states ← A·state. */
function mix2(a: usize): void {
  for (let i = 0; i < 3; i++) {
    const row = el(a, 3 * i);
    const outA = el(NEXT, i), outB = el(NEXT_B, i);
    frMul2(outA, row, STATE, outB, row, STATE_B);
    frMul2(PROD, el(row, 1), el(STATE, 1), PROD_B, el(row, 1), el(STATE_B, 1));
    frAdd(outA, outA, PROD);
    frAdd(outB, outB, PROD_B);
    frMul2(PROD, el(row, 2), el(STATE, 2), PROD_B, el(row, 2), el(STATE_B, 2));
    frAdd(outA, outA, PROD);
    frAdd(outB, outB, PROD_B);
  }
  memory.copy(STATE, NEXT, 3 * FR_SIZE);
  memory.copy(STATE_B, NEXT_B, 3 * FR_SIZE);
}

function fullSboxAdd2(k: i32): void {
  for (let i = 0; i < 3; i++) {
    pow5x2(el(STATE, i), el(STATE_B, i));
    frAdd(el(STATE, i), el(STATE, i), el(POSEIDON_C, k + i));
    frAdd(el(STATE_B, i), el(STATE_B, i), el(POSEIDON_C, k + i));
  }
}

/** permute() on STATE and STATE_B at once. */
function permute2(): void {
  const half = POSEIDON_ROUNDS_F / 2;
  for (let i = 0; i < 3; i++) {
    frAdd(el(STATE, i), el(STATE, i), el(POSEIDON_C, i));
    frAdd(el(STATE_B, i), el(STATE_B, i), el(POSEIDON_C, i));
  }
  for (let r = 0; r < half - 1; r++) {
    fullSboxAdd2((r + 1) * 3);
    mix2(POSEIDON_M);
  }
  fullSboxAdd2(half * 3);
  mix2(POSEIDON_P);
  const s0 = STATE, s1 = el(STATE, 1), s2 = el(STATE, 2);
  const u0 = STATE_B, u1 = el(STATE_B, 1), u2 = el(STATE_B, 2);
  let c = el(POSEIDON_C, (half + 1) * 3);
  let w = POSEIDON_S;
  for (let r = 0; r < POSEIDON_ROUNDS_P; r++) {
    pow5x2(s0, u0);
    frAdd(s0, s0, c);
    frAdd(u0, u0, c);
    frMul2(NEXT, el(w, 0), s0, NEXT_B, el(w, 0), u0);
    frMul2(PROD, el(w, 1), s1, PROD_B, el(w, 1), u1);
    frAdd(NEXT, NEXT, PROD);
    frAdd(NEXT_B, NEXT_B, PROD_B);
    frMul2(PROD, el(w, 2), s2, PROD_B, el(w, 2), u2);
    frAdd(NEXT, NEXT, PROD);
    frAdd(NEXT_B, NEXT_B, PROD_B);
    frMul2(PROD, s0, el(w, 3), PROD_B, u0, el(w, 3));
    frAdd(s1, s1, PROD);
    frAdd(u1, u1, PROD_B);
    frMul2(PROD, s0, el(w, 4), PROD_B, u0, el(w, 4));
    frAdd(s2, s2, PROD);
    frAdd(u2, u2, PROD_B);
    memory.copy(s0, NEXT, FR_SIZE);
    memory.copy(u0, NEXT_B, FR_SIZE);
    c += FR_SIZE;
    w += 5 * FR_SIZE;
  }
  for (let r = 0; r < half - 1; r++) {
    fullSboxAdd2((half + 1) * 3 + POSEIDON_ROUNDS_P + r * 3);
    mix2(POSEIDON_M);
  }
  for (let i = 0; i < 3; i++) pow5x2(el(STATE, i), el(STATE_B, i));
  mix2(POSEIDON_M);
}

/** dstA ← H(aA, bA) and dstB ← H(aB, bB); every input is read before either output is written. */
function hashPairs2(dstA: usize, aA: usize, bA: usize, dstB: usize, aB: usize, bB: usize): void {
  memory.fill(STATE, 0, FR_SIZE);
  memory.fill(STATE_B, 0, FR_SIZE);
  frFromLE(el(STATE, 1), aA);
  frFromLE(el(STATE, 2), bA);
  frFromLE(el(STATE_B, 1), aB);
  frFromLE(el(STATE_B, 2), bB);
  permute2();
  frToLE(dstA, STATE);
  frToLE(dstB, STATE_B);
}

// --- the constants as 64-bit words (the wide build's hashPair) ---------------------
//
// The wide build's hashPair (assembly/wide.wat) runs the whole permutation on
// 64-bit words and reads the constants as words: this table holds C (and
// three zero elements, the last full round's "constants"), M, P and S in that
// order, each element four little-endian words in Montgomery form for R = 2^256
// (the limbs' x·2^261 times 2^256 in frMul: the wide permutation reduces by
// 2^256 in four word rounds, without fr.ts's fifth 5-bit one). Built once, on
// the heap; the portable build builds it too (12 KB, once) but never reads it.

const WORD_ELEMENTS_C: usize = 3 * POSEIDON_ROUNDS_F + POSEIDON_ROUNDS_P + 3;
const WORD_ELEMENTS: usize = WORD_ELEMENTS_C + 9 + 9 + 5 * POSEIDON_ROUNDS_P;
let poseidonWords: usize = 0;

/** 2^256 mod r in limbs (not Montgomery form): frMul(x·2^261, this) = x·2^256 mod r. */
const TO_WORD_FORM: usize = memory.data<u32>([268435451, 78749922, 406014571, 418196286, 342025071, 297253948, 482187706, 406012155, 920183]);

/** n elements at src (limbs, x·2^261 mod r) → dst (words, x·2^256 mod r: the wide permutation's Montgomery form, R = 2^256). */
function packWords(dst: usize, src: usize, n: usize): void {
  for (let i: usize = 0; i < n; i++) {
    const d = dst + i * 32;
    const s = PROD;
    frMul(s, src + i * FR_SIZE, TO_WORD_FORM);
    const l0 = <u64>load<u32>(s), l1 = <u64>load<u32>(s, 4), l2 = <u64>load<u32>(s, 8);
    const l3 = <u64>load<u32>(s, 12), l4 = <u64>load<u32>(s, 16), l5 = <u64>load<u32>(s, 20);
    const l6 = <u64>load<u32>(s, 24), l7 = <u64>load<u32>(s, 28), l8 = <u64>load<u32>(s, 32);
    store<u64>(d, l0 | (l1 << 29) | (l2 << 58));
    store<u64>(d, (l2 >> 6) | (l3 << 23) | (l4 << 52), 8);
    store<u64>(d, (l4 >> 12) | (l5 << 17) | (l6 << 46), 16);
    store<u64>(d, (l6 >> 18) | (l7 << 11) | (l8 << 40), 24);
  }
}

/** The word table's address (built on first use). */
function wordTable(): usize {
  if (poseidonWords == 0) {
    const t = heap.alloc(WORD_ELEMENTS * 32);
    const nC = WORD_ELEMENTS_C - 3;
    packWords(t, POSEIDON_C, nC);
    memory.fill(t + nC * 32, 0, 3 * 32);
    packWords(t + WORD_ELEMENTS_C * 32, POSEIDON_M, 9);
    packWords(t + (WORD_ELEMENTS_C + 9) * 32, POSEIDON_P, 9);
    packWords(t + (WORD_ELEMENTS_C + 18) * 32, POSEIDON_S, 5 * POSEIDON_ROUNDS_P);
    poseidonWords = t;
  }
  return poseidonWords;
}

/**
 * dst ← H(a, b), all 32-byte little-endian (dst may be a or b); a and b < r.
 * words: wordTable(), which only the wide build's hashPair reads; the check
 * keeps the parameter (binaryen drops an unused one, and the wide build's
 * hashPair, of the same signature, would no longer fit).
 */
function hashPair(dst: usize, a: usize, b: usize, words: usize): void {
  if (words == 0) unreachable();
  memory.fill(STATE, 0, FR_SIZE);
  frFromLE(el(STATE, 1), a);
  frFromLE(el(STATE, 2), b);
  permute();
  frToLE(dst, STATE);
}

/** io: a ‖ b → H(a, b). POSEIDON_OK, or POSEIDON_NOT_CANONICAL when an input is ≥ r. */
export function poseidonHash(): i32 {
  const a = ioBase, b = ioBase + NODE_BYTES;
  if (!leIsCanonical(a) || !leIsCanonical(b)) return POSEIDON_NOT_CANONICAL;
  hashPair(ioBase, a, b, wordTable());
  return POSEIDON_OK;
}

/**
 * io: n nodes → their ⌈n/2⌉ parents (a lone last node carried up). The parent
 * count, or POSEIDON_NOT_CANONICAL. The wide build replaces this function
 * (assembly/wide.wat) with the same steps on the one-lane hashPair: there the
 * one-lane permutation, with its matrix rows reduced once (dot3), is faster
 * than the two lanes of frMul2.
 */
export function poseidonLevel(n: u32): i32 {
  const count = <usize>n;
  for (let i: usize = 0; i < count; i++) if (!leIsCanonical(ioBase + i * NODE_BYTES)) return POSEIDON_NOT_CANONICAL;
  const pairs = count >> 1;
  // Parent i overwrites node i, never a node still to be read (2i ≥ i); two
  // pairs at a time read their four nodes before writing parents i and i+1
  // (i+1 ≤ 2i+1, a node of this step's first pair).
  let i: usize = 0;
  for (; i + 1 < pairs; i += 2) {
    hashPairs2(
      ioBase + i * NODE_BYTES, ioBase + 2 * i * NODE_BYTES, ioBase + (2 * i + 1) * NODE_BYTES,
      ioBase + (i + 1) * NODE_BYTES, ioBase + (2 * i + 2) * NODE_BYTES, ioBase + (2 * i + 3) * NODE_BYTES,
    );
  }
  for (; i < pairs; i++) {
    hashPair(ioBase + i * NODE_BYTES, ioBase + 2 * i * NODE_BYTES, ioBase + (2 * i + 1) * NODE_BYTES, wordTable());
  }
  if (count & 1) memory.copy(ioBase + pairs * NODE_BYTES, ioBase + (count - 1) * NODE_BYTES, NODE_BYTES);
  return <i32>(pairs + (count & 1));
}
