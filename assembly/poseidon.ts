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

import { FR_SIZE, frMul, frAdd, leIsCanonical, frFromLE, frToLE } from "./fr";
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

/** x ← x^5 (three multiplications). */
function pow5(x: usize): void {
  frMul(SQ, x, x);
  frMul(SQ, SQ, SQ);
  frMul(x, x, SQ);
}

/** state ← A·state, A a 3×3 matrix stored row by row. */
function mix(a: usize): void {
  for (let i = 0; i < 3; i++) {
    const row = el(a, 3 * i);
    const out = el(NEXT, i);
    frMul(out, row, STATE);
    frMul(PROD, el(row, 1), el(STATE, 1));
    frAdd(out, out, PROD);
    frMul(PROD, el(row, 2), el(STATE, 2));
    frAdd(out, out, PROD);
  }
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
    frMul(n0, el(w, 0), s0);
    frMul(PROD, el(w, 1), s1);
    frAdd(n0, n0, PROD);
    frMul(PROD, el(w, 2), s2);
    frAdd(n0, n0, PROD);
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

/** dst ← H(a, b), all 32-byte little-endian (dst may be a or b); a and b < r. */
function hashPair(dst: usize, a: usize, b: usize): void {
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
  hashPair(ioBase, a, b);
  return POSEIDON_OK;
}

/** io: n nodes → their ⌈n/2⌉ parents (a lone last node carried up). The parent count, or POSEIDON_NOT_CANONICAL. */
export function poseidonLevel(n: u32): i32 {
  const count = <usize>n;
  for (let i: usize = 0; i < count; i++) if (!leIsCanonical(ioBase + i * NODE_BYTES)) return POSEIDON_NOT_CANONICAL;
  const pairs = count >> 1;
  // Parent i overwrites node i, never a node still to be read (2i ≥ i).
  for (let i: usize = 0; i < pairs; i++) {
    hashPair(ioBase + i * NODE_BYTES, ioBase + 2 * i * NODE_BYTES, ioBase + (2 * i + 1) * NODE_BYTES);
  }
  if (count & 1) memory.copy(ioBase + pairs * NODE_BYTES, ioBase + (count - 1) * NODE_BYTES, NODE_BYTES);
  return <i32>(pairs + (count & 1));
}
