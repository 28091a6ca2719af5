// The wide build's tower kernels: an Fp6 product with lazy reduction, one
// Montgomery reduction per output Fp coefficient (the word-level pieces are
// ./core.ts's).
//
// NOT REGISTERED in scripts/asc-wide.ts's WIDE_FUNCTIONS: on Bun 1.4.5 (the
// engine the service runs) it measured SLOWER than the portable fp6Mul built
// on the wide fp2Mul, in one run of the A/B bench (`bun bench/field.ts
// --without fp6Mul`, 60 blocks, wide − fp6Mul against wide): fp6Mul 881 ns
// against 1507 ns with operand-scanning sums (mulAdd), 1246 ns with the
// column sums below; fp12Mul 3.0 µs against 4.8 µs, the final exponentiation
// 437 µs against 556 µs. A first form (Karatsuba over Fp6 and Fp2: 18 word
// products instead of 36, the combinations as nine-word two's-complement
// additions) measured 1238 ns against 893 ns. What the measurements say: a word
// product with its sums costs ≈ 23 ns here (the six-product c2 pair alone
// was 280 ns), a nine-word carry chain ≈ 20 ns (each add128 waits on the
// previous carry), so 36 products cost more than the portable path's 24
// products and 12 reductions, and Karatsuba's savings go into carry chains.
// Kept so that another engine (or a later JIT) can be measured by adding one
// WIDE_FUNCTIONS line; test/assembly/wide-tower.test.ts holds the bounds.
//
// fp6Mul (Fp6 = Fp2[v]/(v³ − ξ), ξ = 9 + u), schoolbook over Fp6 and Fp2:
//   1. every input coefficient (each < 8p, the lazy sums fp6.ts allows; after
//      pack < 2^256 < 5.3p) is packed once and reduced below p by conditional
//      subtractions of 4p, 2p, p; n_j = p − b_j (≤ p) makes a negative term a
//      product: a_i·(−b_j) ≡ a_i·n_j (mod p), and redc only needs T ≡ the
//      value mod p;
//   2. c2 = a0b2 + a1b1 + a2b0: re and im are each a sum of six products < p²:
//      T < 6p² < 1.2·p·2^256 (p² < 0.19·p·2^256);
//   3. c0 = a0b0 + ξ·(X + Yu) with X + Yu = a1b2 + a2b1 (X, Y sums of four
//      products, < 4p² < 0.76·p·2^256), ξ(X + Yu) = (9X − Y) + (X + 9Y)u:
//      re = 9X − Y + p·2^256 + (two products) ∈ (0, 6.8 + 1 + 0.38)·p·2^256,
//      im = 9Y + X + (two products) < 8p·2^256; c1 = a0b1 + a1b0 + ξ·a2b2 the
//      same with X, Y sums of two products (smaller). 9X − Y is computed in
//      nine-word two's complement (modulo 2^576): it may be negative until
//      p·2^256 (> Y) is added. Every T is below 33p·2^256 (redc's
//      precondition) and 2^576;
//   4. the sums of products are product-scanning (sumOfProducts).
// out may alias a or b: every input is packed before anything is stored.

import { P } from "../asc-constants.ts";
import { Fn, ZERO, k, pack, redcStore, words } from "./core.ts";

const FP = 36;
const FP2 = 2 * FP;

/** x (four words, < 2^256 < 8p) reduced below p: conditional subtractions of 4p, 2p, p. */
function reduceBelowP(f: Fn, x: string): void {
  for (const m of [4n, 2n, 1n]) {
    const q = words(m * P);
    f.sub128("zd0", "h", f.get(`${x}0`), ZERO, k(q[0]!), ZERO);
    for (let i = 1; i < 4; i++) {
      f.sub128(`zd${i}`, "g", f.get(`${x}${i}`), ZERO, k(q[i]!), ZERO);
      f.add128(`zd${i}`, "h", f.get(`zd${i}`), f.get("g"), f.get("h"), f.get("h"));
    }
    // h = 0: no borrow, x ≥ m·p.
    for (let i = 0; i < 4; i++) f.set(`${x}${i}`, `(select ${f.get(`zd${i}`)} ${f.get(`${x}${i}`)} (i64.eqz ${f.get("h")}))`);
  }
}

/** out = x + y on n words, modulo 2^(64n). */
function addN(f: Fn, out: string, x: string, y: string, n = 9): void {
  f.add128(`${out}0`, "c", f.get(`${x}0`), ZERO, f.get(`${y}0`), ZERO);
  for (let i = 1; i < n; i++) {
    f.add128(`${out}${i}`, "g", f.get(`${x}${i}`), ZERO, f.get(`${y}${i}`), ZERO);
    f.add128(`${out}${i}`, "c", f.get(`${out}${i}`), f.get("g"), f.get("c"), ZERO);
  }
}

/** out = x − y on nine words, modulo 2^576. */
function subN(f: Fn, out: string, x: string, y: string): void {
  f.sub128(`${out}0`, "h", f.get(`${x}0`), ZERO, f.get(`${y}0`), ZERO);
  for (let i = 1; i < 9; i++) {
    f.sub128(`${out}${i}`, "g", f.get(`${x}${i}`), ZERO, f.get(`${y}${i}`), ZERO);
    f.add128(`${out}${i}`, "h", f.get(`${out}${i}`), f.get("g"), f.get("h"), f.get("h"));
  }
}

/** out = 9·x on nine words, modulo 2^576 (8x + x; out ≠ x). */
function times9(f: Fn, out: string, x: string): void {
  f.set(`${out}0`, `(i64.shl ${f.get(`${x}0`)} (i64.const 3))`);
  for (let i = 1; i < 9; i++) {
    f.set(`${out}${i}`, `(i64.or (i64.shl ${f.get(`${x}${i}`)} (i64.const 3)) (i64.shr_u ${f.get(`${x}${i - 1}`)} (i64.const 61)))`);
  }
  addN(f, out, out, x);
}

/**
 * T0..T8 = Σ x·y over the pairs (four-word operands), product-scanning: every
 * 64×64 → 128 product adds its low word into column i + j and its high word
 * into column i + j + 1, each column a 128-bit accumulator. The columns are
 * independent chains (an operand-scanning mulAdd makes every step wait on
 * the previous carry), and the carries are propagated once at the end. A
 * column takes at most 2·4·n words < 2^64, so it stays below 2^70 (n ≤ 32);
 * the sum itself must be below 2^576.
 */
function sumOfProducts(f: Fn, pairs: [string, string][], T: string): void {
  const seen = new Set<number>();
  const add = (col: number, v: string) => {
    if (!seen.has(col)) {
      seen.add(col);
      f.set(`zc${col}l`, v);
      f.set(`zc${col}h`, ZERO);
    } else f.add128(`zc${col}l`, `zc${col}h`, f.get(`zc${col}l`), f.get(`zc${col}h`), v, ZERO);
  };
  for (const [x, y] of pairs) {
    for (let i = 0; i < 4; i++) {
      for (let j = 0; j < 4; j++) {
        f.mulWide("lo", "hi", f.get(`${x}${i}`), f.get(`${y}${j}`));
        add(i + j, f.get("lo"));
        add(i + j + 1, f.get("hi"));
      }
    }
  }
  f.set(`${T}0`, f.get("zc0l"));
  f.set("c", f.get("zc0h"));
  for (let col = 1; col < 8; col++) {
    f.add128(`${T}${col}`, "c", f.get(`zc${col}l`), f.get(`zc${col}h`), f.get("c"), ZERO);
  }
  f.set(`${T}8`, f.get("c"));
}

/** out = a·b in Fp6, fully reduced coefficients (fp6Mul). */
export function fp6Mul(name: string): string {
  const f = new Fn();
  // Coefficient j (0..5: b0.re, b0.im, b1.re, …) of a and b: words a{j}_0..3, b{j}_0..3, each < p;
  // and n{j}_ = p − b_j (≤ p), so that a negative term a_i·(−b_j) is the product a_i·n_j ≡ −a_i·b_j.
  for (const s of ["a", "b"]) {
    for (let j = 0; j < 6; j++) {
      pack(f, s, j * FP, `${s}${j}_`, P);
      reduceBelowP(f, `${s}${j}_`);
    }
  }
  const pw = words(P);
  for (let j = 0; j < 6; j++) {
    f.sub128(`n${j}_0`, "h", k(pw[0]!), ZERO, f.get(`b${j}_0`), ZERO);
    for (let i = 1; i < 4; i++) {
      f.sub128(`n${j}_${i}`, "g", k(pw[i]!), ZERO, f.get(`b${j}_${i}`), ZERO);
      f.add128(`n${j}_${i}`, "h", f.get(`n${j}_${i}`), f.get("g"), f.get("h"), f.get("h"));
    }
  }
  const A = (i: number, c: 0 | 1) => `a${2 * i + c}_`;
  const B = (i: number, c: 0 | 1) => `b${2 * i + c}_`;
  const N = (i: number, c: 0 | 1) => `n${2 * i + c}_`;
  /** T = Σ x·y over the pairs (fresh), or T += Σ x·y. */
  const acc = (T: string, pairs: [string, string][], fresh: boolean) => {
    if (fresh) sumOfProducts(f, pairs, T);
    else {
      sumOfProducts(f, pairs, "zU");
      addN(f, T, T, "zU");
    }
  };
  /** The real and imaginary parts of a_i·b_j as (x, y) pairs: re = a_r b_r + a_i·(−b_i), im = a_r b_i + a_i b_r. */
  const re = (i: number, j: number): [string, string][] => [
    [A(i, 0), B(j, 0)],
    [A(i, 1), N(j, 1)],
  ];
  const im = (i: number, j: number): [string, string][] => [
    [A(i, 0), B(j, 1)],
    [A(i, 1), B(j, 0)],
  ];
  const pOffset = words(P);
  /** T += p·2^256 (words 4..8). */
  const addP256 = (T: string) => {
    f.add128(`${T}4`, "c", f.get(`${T}4`), ZERO, k(pOffset[0]!), ZERO);
    for (let i = 1; i < 4; i++) {
      f.add128(`${T}${4 + i}`, "g", f.get(`${T}${4 + i}`), ZERO, k(pOffset[i]!), ZERO);
      f.add128(`${T}${4 + i}`, "c", f.get(`${T}${4 + i}`), f.get("g"), f.get("c"), ZERO);
    }
    f.set(`${T}8`, `(i64.add ${f.get(`${T}8`)} ${f.get("c")})`);
  };
  /**
   * Coefficient pair (re at `at`, im at at + 36) of u + ξ·(X + Yu) = u + (9X − Y) + (X + 9Y)u,
   * with X, Y (sums of products, bounds in the header) already in words zX, zY and u's products given.
   */
  const withXi = (at: number, uRe: [string, string][], uIm: [string, string][]) => {
    times9(f, "zC", "zX");
    subN(f, "zC", "zC", "zY");
    addP256("zC");
    acc("zC", uRe, false);
    redcStore(f, "zC", P, "out", at);
    times9(f, "zC", "zY");
    addN(f, "zC", "zC", "zX");
    acc("zC", uIm, false);
    redcStore(f, "zC", P, "out", at + FP);
  };
  // c0 = a0b0 + ξ(a1b2 + a2b1)
  acc("zX", [...re(1, 2), ...re(2, 1)], true);
  acc("zY", [...im(1, 2), ...im(2, 1)], true);
  withXi(0, re(0, 0), im(0, 0));
  // c1 = a0b1 + a1b0 + ξ·a2b2
  acc("zX", re(2, 2), true);
  acc("zY", im(2, 2), true);
  withXi(FP2, [...re(0, 1), ...re(1, 0)], [...im(0, 1), ...im(1, 0)]);
  // c2 = a0b2 + a1b1 + a2b0
  acc("zC", [...re(0, 2), ...re(1, 1), ...re(2, 0)], true);
  redcStore(f, "zC", P, "out", 2 * FP2);
  acc("zC", [...im(0, 2), ...im(1, 1), ...im(2, 0)], true);
  redcStore(f, "zC", P, "out", 2 * FP2 + FP);
  return f.text(name, ["out", "a", "b"]);
}
